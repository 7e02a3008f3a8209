const solc = require('solc');
const fs = require('fs');
const path = require('path');
const input = {
  language: 'Solidity',
  sources: { 'TetherStandIn.sol': { content: fs.readFileSync('TetherStandIn.sol', 'utf8') } },
  settings: {
    optimizer: { enabled: true, runs: 200 },
    evmVersion: 'paris',
    outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object'] } },
  },
};
const out = JSON.parse(
  solc.compile(JSON.stringify(input), {
    import: (p) => ({ contents: fs.readFileSync(path.join('node_modules', p), 'utf8') }),
  }),
);
if (out.errors?.some((e) => e.severity === 'error')) {
  console.error(out.errors);
  process.exit(1);
}
const c = out.contracts['TetherStandIn.sol'].TetherStandIn;
fs.writeFileSync(
  process.argv[2],
  JSON.stringify(
    {
      contractName: 'TetherStandIn',
      compiler: 'solc 0.8.24+commit.e11b9ed9, optimizer 200 runs, evmVersion paris',
      source: 'deploy/hardhat/TetherStandIn.sol',
      abi: c.abi,
      bytecode: '0x' + c.evm.bytecode.object,
    },
    null,
    2,
  ) + '\n',
);
console.log('bytecode bytes', c.evm.bytecode.object.length / 2);
