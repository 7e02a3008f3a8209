#!/usr/bin/env node
// Deploys the USDT stand-in (TetherStandIn.json, 6 decimals) to an EVM node over plain JSON-RPC from the
// node's first unlocked account and prints the contract address. Usage:
//   node deploy/hardhat/deploy-usdt.mjs [rpcUrl] [supplyInBaseUnits]
// No dependencies, so it runs in the bare node image of the docker compose `hardhat` service.
import { readFileSync } from 'node:fs';

const artifact = JSON.parse(readFileSync(new URL('./TetherStandIn.json', import.meta.url), 'utf8'));

let id = 0;
async function call(rpcUrl, method, params = []) {
  const res = await fetch(rpcUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: ++id, method, params }),
  });
  const body = await res.json();
  if (body.error) throw new Error(`${method}: ${body.error.message}`);
  return body.result;
}

/** Deploys the stand-in with `supply` base units minted to the node's first account; resolves its address. */
export async function deployUsdt(rpcUrl, supply = 1_000_000_000n * 10n ** 6n) {
  const rpc = (method, params) => call(rpcUrl, method, params);
  const [from] = await rpc('eth_accounts');
  const data = artifact.bytecode + supply.toString(16).padStart(64, '0');
  const hash = await rpc('eth_sendTransaction', [{ from, data, gas: '0x300000' }]);
  for (let i = 0; i < 600; i++) {
    const receipt = await rpc('eth_getTransactionReceipt', [hash]);
    if (receipt) {
      if (receipt.status !== '0x1') throw new Error('USDT deployment reverted');
      return receipt.contractAddress;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('USDT deployment was not mined');
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const rpcUrl = process.argv[2] ?? process.env.CHAIN_EVM_RPC_URL ?? 'http://127.0.0.1:8545';
  deployUsdt(rpcUrl, process.argv[3] ? BigInt(process.argv[3]) : undefined).then(
    (address) => console.log(address),
    (err) => {
      console.error(err.message);
      process.exit(1);
    },
  );
}
