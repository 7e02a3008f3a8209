#!/usr/bin/env node
// Bench "chain": the EVM deposit scan of custody's worker with 1,000 watched addresses, beside the Hardhat node's
// bare batched eth_getBlockByNumber on the same blocks. The measurement itself is bench/chain-scan.mjs (it owns
// its Hardhat node, chain fixture and database); this file runs it as a child and turns its JSON into figures.
//
//   pnpm build && node bench/chain.mjs   (--quick: 60 blocks instead of 300)
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { standalone } from './lib/bench.mjs';
import { root } from './lib/proc.mjs';
import { figure, progress } from './lib/report.mjs';

export const bench = {
  name: 'chain',
  description: 'EVM deposit scan (1,000 watched addresses) vs bare eth_getBlockByNumber',
  async run(ctx) {
    const blocks = ctx.quick ? 60 : 300;
    progress(`chain: mining and scanning ${blocks} blocks (bench/chain-scan.mjs)`);
    const child = spawn(process.execPath, [join(root, 'bench/chain-scan.mjs'), '--blocks', String(blocks)], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err = (err + d).slice(-4000)));
    const code = await new Promise((r) => child.once('exit', r));
    if (code !== 0) throw new Error(`chain-scan exited with ${code}: ${err}`);
    const r = JSON.parse(out.slice(out.indexOf('{')));
    progress(`  chain: ${r.scan.blocksPerSecond} blocks/s, baseline ${r.baseline.blocksPerSecond} blocks/s`);
    return [
      figure({
        key: 'chain.scan',
        bench: 'chain',
        figure: `EVM deposit scan, ${r.watchedAddresses} watched, ${r.blocks} blocks`,
        unit: 'blocks/s',
        value: r.scan.blocksPerSecond,
        baseline: r.baseline.blocksPerSecond,
        baselineLabel: 'getBlock',
        // CPU ms per block: the worker's (Hardhat's own is in latest.json).
        cpuMsPerReq: r.scan.cpuMsPerBlock.worker,
        cpuPer: 'block',
        hardhatCpuMsPerBlock: r.scan.cpuMsPerBlock.hardhat,
        postgresCpuMsPerBlock: r.scan.cpuMsPerBlock.postgres,
        depositsCreated: r.scan.depositsCreated,
        anomalies: r.anomalies.length,
        goal: { zeroAnomalies: true },
      }),
    ];
  },
};

await standalone(import.meta.url, bench);
