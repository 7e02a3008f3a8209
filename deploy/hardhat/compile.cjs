// Compiles one contract of this folder with the solc npm package's bundled compiler (no download) and writes
// its artifact: `node compile.cjs <Name> <out.json>` (Name.sol here; imports resolved from ./node_modules).
// TetherStandIn.json was made with solc 0.8.24 (decision 0213), OddToken.json with 0.8.26 (decision 0466).
const solc = require('solc');
const fs = require('fs');
const path = require('path');
const [name, outFile] = process.argv.slice(2);
if (!name || !outFile) {
  console.error('usage: node compile.cjs <ContractName> <out.json>');
  process.exit(2);
}
const file = `${name}.sol`;
const input = {
  language: 'Solidity',
  sources: { [file]: { content: fs.readFileSync(path.join(__dirname, file), 'utf8') } },
  settings: {
    optimizer: { enabled: true, runs: 200 },
    evmVersion: 'paris',
    outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object', 'evm.deployedBytecode.object'] } },
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
const c = out.contracts[file][name];
fs.writeFileSync(
  outFile,
  JSON.stringify(
    {
      contractName: name,
      compiler: `solc ${solc.version()}, optimizer 200 runs, evmVersion paris`,
      source: `deploy/hardhat/${file}`,
      abi: c.abi,
      bytecode: '0x' + c.evm.bytecode.object,
      deployedBytecode: '0x' + c.evm.deployedBytecode.object,
    },
    null,
    2,
  ) + '\n',
);
console.log(name, 'bytecode bytes', c.evm.bytecode.object.length / 2);
