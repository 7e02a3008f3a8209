#!/usr/bin/env node
// EVM deposit scanning rate with 1,000 watched addresses, beside the node's bare eth_getBlockByNumber rate
// measured in the same run on the same blocks.
//
//   pnpm build && node bench/chain-scan.mjs [--blocks 300] [--per-block 4] [--batch 50]
//
// Needs Postgres (DATABASE_BASE_URL, default postgres://postgres@127.0.0.1:5432) and Redis (REDIS_URL). It
// starts its own Hardhat node on a free port with the USDT stand-in, creates the database `bench_chain_scan`
// with 500 live ETH and 500 live USDT deposit addresses, mines N blocks each holding `per-block` transfers
// (half to watched addresses, ETH and USDT alternating, half to strangers), then:
//   1. baseline: fetches every block with its transactions (eth_getBlockByNumber, full) in the scanner's own
//      pattern — batches of `batch` blocks in one HTTP request — without looking at them;
//   2. scan: starts the custody worker (apps/custody-api/dist/worker.js) with the `evm` chain, moves its
//      cursor to block 0 and times it until it has passed the head: blocks, transactions and Transfer logs
//      read, deposits created and committed with the cursor.
// Prints JSON: blocks/s of both, the ratio, CPU ms per block of the worker, Hardhat and Postgres, and an
// anomaly check (every deposit to a watched address created exactly once, none to strangers).
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { realpathSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { DEPLOYED_LOGGING, REDIS_URL, postgresCpu, processCpuMs, productNodeArgs } from './lib/proc.mjs';

const root = new URL('..', import.meta.url).pathname;
const requireApp = createRequire(`${root}apps/custody-api/package.json`);
const { Client } = requireApp('pg');
const viem = requireApp('viem');
const { privateKeyToAccount, generatePrivateKey } = requireApp('viem/accounts');

const { values: args } = parseArgs({
  options: {
    blocks: { type: 'string', default: '300' },
    'per-block': { type: 'string', default: '4' },
    batch: { type: 'string', default: '50' },
  },
});
const BLOCKS = Number(args.blocks);
const PER_BLOCK = Number(args['per-block']);
const BATCH = Number(args.batch);
const WATCHED = 1000;
const BASE = process.env.DATABASE_BASE_URL ?? 'postgres://postgres@127.0.0.1:5432';
const DB = 'bench_chain_scan';
const DATABASE_URL = `${BASE}/${DB}`;
const FUNDER = privateKeyToAccount('0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80');
const ETH_ASSET = 'a0000000-0000-4000-8000-000000000002';
const USDT_ASSET = 'a0000000-0000-4000-8000-000000000003';

const children = [];
const freePort = () =>
  new Promise((resolve) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });

const cpuMs = (child) => processCpuMs(child.pid);

async function sql(text, params = [], url = DATABASE_URL) {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(text, params)).rows;
  } finally {
    await client.end();
  }
}

async function main() {
  // --- the chain ---
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const hardhat = spawn(
    process.execPath,
    [
      realpathSync(`${root}apps/custody-api/node_modules/hardhat/internal/cli/cli.js`),
      'node',
      '--config',
      `${root}deploy/hardhat/hardhat.config.js`,
      '--hostname',
      '127.0.0.1',
      '--port',
      String(port),
    ],
    { cwd: `${root}apps/custody-api`, stdio: ['ignore', 'ignore', 'inherit'] },
  );
  children.push(hardhat);
  const { deployUsdt } = await import(`${root}deploy/hardhat/deploy-usdt.mjs`);
  let usdt;
  for (let i = 0; !usdt; i++) {
    try {
      usdt = await deployUsdt(url);
    } catch (err) {
      if (i > 400) throw err;
      await sleep(150);
    }
  }
  const client = viem.createPublicClient({ transport: viem.http(url, { batch: { wait: 0 } }) });
  const rpc = (method, params = []) => client.request({ method, params });

  // --- 1,000 watched addresses ---
  await sql(`DROP DATABASE IF EXISTS ${DB} WITH (FORCE)`, [], `${BASE}/postgres`);
  await sql(`CREATE DATABASE ${DB}`, [], `${BASE}/postgres`);
  const migrate = spawn(process.execPath, [`${root}apps/custody-api/dist/database/migrate.js`], {
    env: { ...process.env, DATABASE_URL },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  await new Promise((r) => migrate.once('exit', r));
  const watched = Array.from({ length: WATCHED }, () => privateKeyToAccount(generatePrivateKey()).address);
  // One vault per ETH + USDT wallet pair (one wallet per asset per vault).
  for (let i = 0; i < WATCHED / 2; i++) {
    await sql(
      `WITH t AS (SELECT id FROM custody.tenants LIMIT 1),
              tt AS (INSERT INTO custody.tenants (name) SELECT 'bench' WHERE NOT EXISTS (SELECT 1 FROM t) RETURNING id),
              tid AS (SELECT id FROM t UNION ALL SELECT id FROM tt),
              v AS (INSERT INTO custody.vaults (tenant_id, environment, external_id, name)
                    SELECT id, 'production', $3, 'bench' FROM tid RETURNING id, tenant_id),
              w AS (INSERT INTO custody.wallets (tenant_id, environment, vault_id, asset_id)
                    SELECT v.tenant_id, 'production', v.id, a FROM v, unnest($4::uuid[]) a RETURNING id, asset_id),
              b AS (INSERT INTO custody.balances (wallet_id) SELECT id FROM w)
         INSERT INTO custody.wallet_addresses (wallet_id, address, derivation_path)
         SELECT w.id, CASE WHEN w.asset_id = $5 THEN $1 ELSE $2 END, 'bench' FROM w`,
      [watched[i], watched[i + WATCHED / 2], `bench-${i}`, [ETH_ASSET, USDT_ASSET], ETH_ASSET],
    );
  }

  // --- the blocks ---
  const strangers = Array.from({ length: 50 }, () => privateKeyToAccount(generatePrivateKey()).address);
  let nonce = Number(await rpc('eth_getTransactionCount', [FUNDER.address, 'pending']));
  const expected = [];
  await rpc('evm_setAutomine', [false]);
  const start = Number(await rpc('eth_blockNumber')) + 1;
  for (let b = 0; b < BLOCKS; b++) {
    const raws = [];
    for (let k = 0; k < PER_BLOCK; k++) {
      const toWatched = k % 2 === 0;
      const token = (b + k) % 4 < 2;
      const index = (b * PER_BLOCK + k) % (WATCHED / 2);
      const to = toWatched ? watched[token ? index + WATCHED / 2 : index] : strangers[k % strangers.length];
      raws.push(
        await FUNDER.signTransaction({
          chainId: 31337,
          type: 'eip1559',
          nonce: nonce++,
          to: token ? usdt : to,
          value: token ? 0n : 1000n + BigInt(b),
          data: token
            ? viem.encodeFunctionData({
                abi: viem.parseAbi(['function transfer(address,uint256) returns (bool)']),
                functionName: 'transfer',
                args: [to, 1000n + BigInt(b)],
              })
            : undefined,
          gas: token ? 80_000n : 21_000n,
          maxFeePerGas: 100_000_000_000n,
          maxPriorityFeePerGas: 1_000_000_000n,
        }),
      );
      if (toWatched) expected.push({ to: to.toLowerCase() });
    }
    await Promise.all(raws.map((raw) => rpc('eth_sendRawTransaction', [raw])));
    await rpc('evm_mine');
  }
  await rpc('evm_setAutomine', [true]);
  const head = Number(await rpc('eth_blockNumber'));

  // --- 1. baseline: the node's bare eth_getBlockByNumber rate, same blocks, same batching ---
  const baseCpu0 = cpuMs(hardhat);
  const t0 = performance.now();
  for (let n = 0; n <= head; n += BATCH) {
    const numbers = [];
    for (let i = n; i < Math.min(n + BATCH, head + 1); i++) numbers.push(BigInt(i));
    await Promise.all(
      numbers.map((blockNumber) => client.getBlock({ blockNumber, includeTransactions: true })),
    );
  }
  const baselineMs = performance.now() - t0;
  const baselineHardhatCpu = cpuMs(hardhat) - baseCpu0;

  // --- 2. the worker's scan ---
  await sql(`INSERT INTO custody.evm_cursors (chain_id, next_block) VALUES (31337, $1)`, [head + 1]);
  const workerPort = await freePort();
  const worker = spawn(process.execPath, [...productNodeArgs(), `${root}apps/custody-api/dist/worker.js`], {
    env: {
      ...process.env,
      DATABASE_URL,
      REDIS_URL,
      QUEUE_PREFIX: `bench${randomBytes(3).toString('hex')}`,
      SECRETS_MASTER_KEY: randomBytes(32).toString('base64'),
      ...DEPLOYED_LOGGING,
      NODE_ENV: 'production',
      WORKER_PORT: String(workerPort),
      HOST: '127.0.0.1',
      OUTBOX_RELAY_ENABLED: 'false',
      CUSTODY_SWEEP_INTERVAL_MS: '0',
      CHAIN_EVM_RPC_URL: url,
      CHAIN_EVM_CHAIN_ID: '31337',
      CHAIN_EVM_USDT_CONTRACT: usdt,
      CHAIN_EVM_CONFIRMATIONS: '1000000',
      CHAIN_EVM_POLL_MS: '10',
      CHAIN_EVM_SCAN_BATCH: String(BATCH),
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  children.push(worker);
  for (let i = 0; ; i++) {
    try {
      if ((await fetch(`http://127.0.0.1:${workerPort}/health`)).ok) break;
    } catch {
      if (i > 600 || worker.exitCode !== null) throw new Error('worker did not start');
    }
    await sleep(100);
  }
  await sleep(300);
  // One connection watches the cursor: a connection per poll would fork and end a Postgres backend every few
  // milliseconds on the cores the scan runs on (about 20 ms of CPU each on the bench machine, decision 0416).
  const watch = new Client({ connectionString: DATABASE_URL });
  await watch.connect();
  const cpu0 = { worker: cpuMs(worker), hardhat: cpuMs(hardhat), postgresSince: postgresCpu() };
  const t1 = performance.now();
  let scanMs;
  try {
    await watch.query(`UPDATE custody.evm_cursors SET next_block = 0`);
    for (;;) {
      const [row] = (await watch.query(`SELECT next_block FROM custody.evm_cursors`)).rows;
      if (Number(row.next_block) > head) break;
      await sleep(5);
    }
    scanMs = performance.now() - t1;
  } finally {
    await watch.end();
  }
  const cpu = {
    worker: cpuMs(worker) - cpu0.worker,
    hardhat: cpuMs(hardhat) - cpu0.hardhat,
    postgres: cpu0.postgresSince(),
  };

  const deposits = await sql(
    `SELECT lower(destination_address) AS to, count(*)::int AS n FROM custody.transactions GROUP BY 1`,
  );
  const expectedBy = new Map();
  for (const e of expected) expectedBy.set(e.to, (expectedBy.get(e.to) ?? 0) + 1);
  const got = new Map(deposits.map((d) => [d.to, d.n]));
  const anomalies = [];
  for (const [to, n] of expectedBy)
    if (got.get(to) !== n) anomalies.push({ to, expected: n, got: got.get(to) ?? 0 });
  for (const [to, n] of got) if (!expectedBy.has(to)) anomalies.push({ to, expected: 0, got: n });

  const blocks = head + 1;
  const r = (x) => Math.round(x * 100) / 100;
  console.log(
    JSON.stringify(
      {
        watchedAddresses: WATCHED,
        blocks,
        transfersPerBlock: PER_BLOCK,
        firstLoadedBlock: start,
        batch: BATCH,
        baseline: {
          what: 'eth_getBlockByNumber (full), batched',
          blocksPerSecond: r((blocks / baselineMs) * 1000),
          hardhatCpuMsPerBlock: r(baselineHardhatCpu / blocks),
        },
        scan: {
          blocksPerSecond: r((blocks / scanMs) * 1000),
          depositsCreated: deposits.reduce((t, d) => t + d.n, 0),
          cpuMsPerBlock: {
            worker: r(cpu.worker / blocks),
            hardhat: r(cpu.hardhat / blocks),
            postgres: r(cpu.postgres / blocks),
          },
        },
        ratio: r(baselineMs / scanMs),
        anomalies,
      },
      null,
      2,
    ),
  );
}

main()
  .catch((err) => {
    console.error(err);
    process.exitCode = 1;
  })
  .finally(async () => {
    for (const child of children.reverse()) {
      if (child.exitCode === null) {
        child.kill('SIGTERM');
        await new Promise((r) => child.once('exit', r));
      }
    }
  });
