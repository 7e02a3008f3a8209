#!/usr/bin/env node
// Custody transfer throughput beside a bare Fastify single-INSERT baseline, measured in the same run.
//
//   pnpm build && node bench/custody-transfer.mjs [--duration 10] [--connections 50] [--wallets 10]
//
// Needs Postgres and Redis (DATABASE_BASE_URL, default postgres://postgres@127.0.0.1:5432; REDIS_URL,
// default redis://127.0.0.1:6379). It creates its own database `bench_custody`, starts the custody API
// (apps/custody-api/dist/main.js) with the per-key rate limit raised and request logging off, funds N hot
// wallets through sandbox deposits (worker role started for funding, stopped for the measurement), then
// runs autocannon against POST /transactions/transfer with every request signed by libs/auth and a fresh
// Idempotency-Key. Afterwards it checks for anomalies: non-2xx answers, ledger sums against balances,
// negative balances, conservation of the total, transactions created versus 201 answers.
import { spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';

const root = new URL('..', import.meta.url).pathname;
const requireApp = createRequire(`${root}apps/custody-api/package.json`);
const requireRoot = createRequire(`${root}package.json`);
const autocannon = requireRoot('autocannon');
const { Client } = requireApp('pg');
const { signRequest } = requireApp('@tessera/auth');

const { values: args } = parseArgs({
  options: {
    duration: { type: 'string', default: '10' },
    connections: { type: 'string', default: '50' },
    wallets: { type: 'string', default: '10' },
  },
});
const DURATION = Number(args.duration);
const CONNECTIONS = Number(args.connections);
const WALLETS = Number(args.wallets);
const BASE = process.env.DATABASE_BASE_URL ?? 'postgres://postgres@127.0.0.1:5432';
const DB = 'bench_custody';
const DATABASE_URL = `${BASE}/${DB}`;
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const ADMIN_TOKEN = 'bench-admin-token-0123456789';
const API_PORT = 3902;
const WORKER_PORT = 3912;
const BASELINE_PORT = 3903;
const BTC = 'a0000000-0000-4000-8000-000000000001';
/** Signed requests prepared per second of a run (more than the API answers here; extra ones are signed live). */
const PRESIGNED_PER_SECOND = 4000;

const children = [];
function start(script, env, readyUrl, flags = []) {
  const child = spawn(process.execPath, [...flags, script], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  child.stdout.resume();
  children.push(child);
  return (async () => {
    for (let i = 0; i < 200; i++) {
      if (child.exitCode !== null) throw new Error(`${script} exited with ${child.exitCode}`);
      try {
        const res = await fetch(readyUrl);
        if (res.status < 500) return child;
      } catch {
        // not up yet
      }
      await sleep(100);
    }
    throw new Error(`${script} did not start`);
  })();
}
async function stop(child) {
  if (child.exitCode !== null) return;
  child.kill('SIGTERM');
  await new Promise((r) => child.once('exit', r));
}

/** A process's command name and CPU time so far (user + system, ms), from /proc/<pid>/stat (Linux). */
function procStat(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(') ') + 2).split(' ');
    const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
    return { name, cpuMs: ((Number(fields[11]) + Number(fields[12])) * 1000) / 100 }; // USER_HZ ticks
  } catch {
    return undefined; // the process ended meanwhile
  }
}

const cpuMs = (child) => procStat(child.pid)?.cpuMs ?? NaN;

/** CPU time (ms) of every Postgres server process on this machine (all backends, WAL writer, …). */
const postgresCpuMs = () =>
  readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .map(procStat)
    .filter((p) => p?.name === 'postgres')
    .reduce((total, p) => total + p.cpuMs, 0);

async function sql(text, params = [], url = DATABASE_URL) {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(text, params)).rows;
  } finally {
    await client.end();
  }
}

function run(opts) {
  return new Promise((resolve, reject) => {
    const instance = autocannon({ connections: CONNECTIONS, duration: DURATION, ...opts }, (err, result) =>
      err ? reject(err) : resolve(result),
    );
    autocannon.track(instance, { renderProgressBar: false, renderResultsTable: false });
  });
}

async function main() {
  await sql(`DROP DATABASE IF EXISTS ${DB} WITH (FORCE)`, [], `${BASE}/postgres`);
  await sql(`CREATE DATABASE ${DB}`, [], `${BASE}/postgres`);
  const prefix = `bench${randomBytes(3).toString('hex')}`;
  const common = {
    DATABASE_URL,
    REDIS_URL,
    QUEUE_PREFIX: prefix,
    ADMIN_TOKEN,
    SECRETS_MASTER_KEY: randomBytes(32).toString('base64'),
    LOG_LEVEL: 'warn',
    LOG_REQUESTS: 'false',
    NODE_ENV: 'production',
    CUSTODY_RATE_LIMIT_PER_KEY: '100000000',
    DB_POOL_SIZE: '20',
    CHAIN_SIM_STEP_DELAY_MS: '0',
    CHAIN_SIM_BLOCK_MS: '0',
    HOST: '127.0.0.1',
  };
  const api = await start(
    `${root}apps/custody-api/dist/main.js`,
    { ...common, PORT: String(API_PORT), MIGRATE_ON_BOOT: 'true' },
    `http://127.0.0.1:${API_PORT}/health`,
    // BENCH_CPU_PROF=<dir> writes a V8 CPU profile of the API process there.
    process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : [],
  );
  const worker = await start(
    `${root}apps/custody-api/dist/worker.js`,
    { ...common, WORKER_PORT: String(WORKER_PORT) },
    `http://127.0.0.1:${WORKER_PORT}/health`,
  );

  const base = `http://127.0.0.1:${API_PORT}`;
  const adminPost = async (path, body) => {
    const res = await fetch(base + path, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    if (res.status !== 201) throw new Error(`${path}: ${res.status} ${await res.text()}`);
    return res.json();
  };
  const tenant = await adminPost('/admin/tenants', { name: 'Bench' });
  const key = await adminPost(`/admin/tenants/${tenant.id}/keys`, {
    environment: 'test',
    scopes: ['vaults:write', 'wallets:create', 'transfers:write', 'transactions:read', 'sandbox:write'],
  });
  const signed = async (method, path, body, headers = {}) => {
    const raw = body === undefined ? '' : JSON.stringify(body);
    const res = await fetch(base + path, {
      method,
      headers: {
        ...signRequest(key.apiKey, key.apiSecret, { method, pathWithQuery: path, body: raw }),
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...headers,
      },
      body: body === undefined ? undefined : raw,
    });
    if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
    return res.json();
  };

  const FUNDING = '1000';
  const wallets = [];
  for (let i = 0; i < WALLETS; i++) {
    const vault = await signed('POST', '/vaults', { externalId: `hot-${i}`, name: `Hot ${i}` });
    const wallet = await signed('POST', `/vaults/${vault.id}/wallets`, { assetId: BTC });
    await signed('POST', '/sandbox/deposits', { walletId: wallet.walletId, amount: FUNDING });
    wallets.push(wallet.walletId);
  }
  for (let i = 0; i < 300; i++) {
    const [{ n }] = await sql(
      `SELECT count(*)::int AS n FROM custody.transactions WHERE status <> 'Completed'`,
    );
    if (n === 0) break;
    await sleep(100);
  }
  await stop(worker);

  const transferRequest = (timestampMs) => {
    const s = Math.floor(Math.random() * wallets.length);
    let d = Math.floor(Math.random() * (wallets.length - 1));
    if (d >= s) d++;
    const body = JSON.stringify({
      sourceWalletId: wallets[s],
      destinationWalletId: wallets[d],
      amount: '0.00000001',
    });
    return {
      method: 'POST',
      path: '/transactions/transfer',
      body,
      headers: {
        'content-type': 'application/json',
        'idempotency-key': randomUUID(),
        ...signRequest(key.apiKey, key.apiSecret, {
          method: 'POST',
          pathWithQuery: '/transactions/transfer',
          body,
          timestamp: String(timestampMs),
        }),
      },
    };
  };

  // Requests are signed before each run, so the load generator's HMAC work does not compete with the API
  // for the CPU (the baseline's requests are static too). Every request gets its own millisecond
  // timestamp (the replay cache refuses a repeated signature), spread over [now - 20 s, now + 20 s] and
  // used oldest first, so each stays inside the 30 s drift while the run lasts.
  let nextTimestampMs = 0;
  const signedRequests = (seconds) => {
    const count = seconds * PRESIGNED_PER_SECOND;
    const start = Math.max(nextTimestampMs, Date.now() - 20_000);
    nextTimestampMs = start + count;
    const pool = Array.from({ length: count }, (_, i) => transferRequest(start + i));
    let next = 0;
    return [{ setupRequest: (req) => ({ ...req, ...(pool[next++] ?? transferRequest(nextTimestampMs++)) }) }];
  };

  // Warm-up, then the measurement.
  await run({ url: base, duration: 2, requests: signedRequests(2) });
  await sleep(500);
  const [{ n: before }] = await sql(
    `SELECT count(*)::int AS n FROM custody.transactions WHERE type = 'InternalTransfer'`,
  );
  const commits = async () =>
    Number((await sql(`SELECT xact_commit::text AS n FROM pg_stat_database WHERE datname = $1`, [DB]))[0].n);
  const commitsBefore = await commits();
  const apiCpuBefore = cpuMs(api);
  const pgCpuBefore = postgresCpuMs();
  const custody = await run({ url: base, requests: signedRequests(DURATION) });
  const apiCpu = cpuMs(api) - apiCpuBefore;
  const pgCpu = postgresCpuMs() - pgCpuBefore;
  await sleep(600); // pg_stat_database is refreshed at most every 500 ms
  const commitsDuring = (await commits()) - commitsBefore;
  await stop(api);

  const baselineServer = await start(
    `${root}bench/custody-baseline-server.mjs`,
    { DATABASE_URL, PORT: String(BASELINE_PORT) },
    `http://127.0.0.1:${BASELINE_PORT}/`,
  );
  const baselineRequest = {
    method: 'POST',
    path: '/insert',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      sourceWalletId: wallets[0],
      destinationWalletId: wallets[1],
      amount: '0.00000001',
    }),
  };
  await run({ url: `http://127.0.0.1:${BASELINE_PORT}`, duration: 2, requests: [baselineRequest] });
  const baselineCpuBefore = cpuMs(baselineServer);
  const baselinePgCpuBefore = postgresCpuMs();
  const baseline = await run({ url: `http://127.0.0.1:${BASELINE_PORT}`, requests: [baselineRequest] });
  const baselineCpu = cpuMs(baselineServer) - baselineCpuBefore;
  const baselinePgCpu = postgresCpuMs() - baselinePgCpuBefore;
  await stop(baselineServer);

  // Anomalies.
  const [{ n: after }] = await sql(
    `SELECT count(*)::int AS n FROM custody.transactions WHERE type = 'InternalTransfer'`,
  );
  const [ledger] = await sql(`
    SELECT
      (SELECT count(*)::int FROM custody.balances b
         LEFT JOIN (SELECT wallet_id, sum(total_delta) t, sum(available_delta) a FROM custody.ledger_entries
                    GROUP BY wallet_id) e ON e.wallet_id = b.wallet_id
         WHERE b.total <> coalesce(e.t, 0) OR b.available <> coalesce(e.a, 0)) AS "ledgerMismatches",
      (SELECT count(*)::int FROM custody.balances WHERE available < 0) AS "negativeBalances",
      (SELECT sum(total)::text FROM custody.balances) AS "totalHeld"`);
  const expectedTotal = String(BigInt(FUNDING) * 100_000_000n * BigInt(WALLETS));
  const created = after - before;
  const anomalies = {
    non2xx: custody.non2xx,
    errors: custody.errors,
    timeouts: custody.timeouts,
    ledgerMismatches: ledger.ledgerMismatches,
    negativeBalances: ledger.negativeBalances,
    totalConserved: ledger.totalHeld === expectedTotal,
    // Requests still in flight when autocannon stops may commit without being counted as 2xx.
    lostTransactions: Math.max(0, custody['2xx'] - created),
    uncountedInFlight: created - custody['2xx'],
  };
  const ratio = custody.requests.average / baseline.requests.average;
  const report = {
    connections: CONNECTIONS,
    durationSeconds: DURATION,
    hotWallets: WALLETS,
    custodyTransfer: {
      reqPerSec: Math.round(custody.requests.average),
      p99Ms: custody.latency.p99,
      p50Ms: custody.latency.p50,
      total2xx: custody['2xx'],
      nodeCpuMsPerRequest: Number((apiCpu / custody.requests.total).toFixed(3)),
      postgresCpuMsPerRequest: Number((pgCpu / custody.requests.total).toFixed(3)),
      databaseCommitsPerRequest: Number((commitsDuring / custody.requests.total).toFixed(3)),
    },
    baselineFastifyInsert: {
      reqPerSec: Math.round(baseline.requests.average),
      p99Ms: baseline.latency.p99,
      p50Ms: baseline.latency.p50,
      nodeCpuMsPerRequest: Number((baselineCpu / baseline.requests.total).toFixed(3)),
      postgresCpuMsPerRequest: Number((baselinePgCpu / baseline.requests.total).toFixed(3)),
    },
    ratioToBaseline: Number(ratio.toFixed(3)),
    anomalies,
    goals: {
      atLeast40PercentOfBaseline: ratio >= 0.4,
      atLeast500PerSec: custody.requests.average >= 500,
      zeroAnomalies:
        anomalies.non2xx === 0 &&
        anomalies.errors === 0 &&
        anomalies.timeouts === 0 &&
        anomalies.ledgerMismatches === 0 &&
        anomalies.negativeBalances === 0 &&
        anomalies.totalConserved &&
        anomalies.lostTransactions === 0 &&
        anomalies.uncountedInFlight <= CONNECTIONS,
    },
  };
  console.log(JSON.stringify(report, null, 2));
  await sql(`DROP DATABASE IF EXISTS ${DB} WITH (FORCE)`, [], `${BASE}/postgres`);
}

main()
  .catch((err) => {
    console.error(err);
    process.exitCode = 1;
  })
  .finally(async () => {
    for (const child of children) await stop(child);
  });
