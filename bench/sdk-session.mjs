#!/usr/bin/env node
// Bench: the hosted SDK's hot calls of verification-api (GET /api/v1/sdk/session: token check, two Redis rate
// limits, one context query; GET /sdk/{shortCode}: the page) beside a bare Fastify server doing one SELECT,
// measured in the same run against the same Postgres and Redis (autocannon 9).
//
//   pnpm build && node bench/sdk-session.mjs [--connections 50] [--duration 10]
//
// Each server runs in its own child process so autocannon does not share their event loop.
import autocannon from 'autocannon';
import { fork } from 'node:child_process';
import { createRequire } from 'node:module';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const here = dirname(fileURLToPath(import.meta.url));
const appDir = join(here, '../apps/verification-api');
const appRequire = createRequire(join(appDir, 'package.json'));

const { values: args } = parseArgs({
  options: {
    role: { type: 'string' },
    connections: { type: 'string', default: '50' },
    duration: { type: 'string', default: '10' },
  },
});

const POOL = '20';

async function serveApp() {
  const { bootApp } = appRequire('@tessera/testing');
  const { AppModule } = appRequire('./dist/app.module');
  const { loadEnv } = appRequire('./dist/config/env');
  const env = JSON.parse(process.env.BENCH_ENV);
  const app = await bootApp(
    AppModule.forRoot(
      loadEnv({
        ...env,
        LOG_LEVEL: 'silent',
        DB_POOL_SIZE: POOL,
        // Raised for the bench only (defaults: 120 per token, 600 per IP, per minute).
        RATE_LIMIT_PER_CREDENTIAL_PER_MINUTE: '100000000',
        SDK_RATE_LIMIT_PER_TOKEN_PER_MINUTE: '100000000',
        SDK_RATE_LIMIT_PER_IP_PER_MINUTE: '100000000',
      }),
    ),
    { rpc: false, listen: true },
  );
  process.send({ url: await app.getUrl() });
}

async function serveBaseline() {
  const Fastify = appRequire('fastify');
  const { Pool } = appRequire('pg');
  const env = JSON.parse(process.env.BENCH_ENV);
  const pool = new Pool({ connectionString: env.DATABASE_URL, max: Number(POOL) });
  const app = Fastify({ logger: false });
  app.get('/baseline', async () => {
    const { rows } = await pool.query('SELECT now() AS at, $1::text AS id', ['x']);
    return rows[0];
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address();
  process.send({ url: `http://127.0.0.1:${address.port}` });
}

function startChild(role, env) {
  const child = fork(fileURLToPath(import.meta.url), ['--role', role], {
    env: { ...process.env, BENCH_ENV: JSON.stringify(env) },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    // BENCH_CPU_PROF=<dir> writes a V8 CPU profile of the API process there.
    execArgv:
      process.env.BENCH_CPU_PROF && role === 'app'
        ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`]
        : [],
  });
  return new Promise((resolve, reject) => {
    child.once('message', (msg) => resolve({ child, url: msg.url, cpu: () => childCpu(child) }));
    child.once('exit', (code) => reject(new Error(`${role} exited with ${code}`)));
  });
}

/** The child's CPU time so far (user + system, ms): CPU per request is less noisy than req/s on a busy box. */
function childCpu(child) {
  return new Promise((resolve) => {
    child.once('message', (msg) => resolve(msg.cpuMs));
    child.send('cpu');
  });
}

async function measure(name, server, opts) {
  const before = await server.cpu();
  const result = await run(name, opts);
  result.cpuMsPerReq = ((await server.cpu()) - before) / Math.max(1, result.total);
  return result;
}

function run(name, opts) {
  return new Promise((resolve, reject) => {
    autocannon(
      { connections: Number(args.connections), duration: Number(args.duration), ...opts },
      (err, result) => {
        if (err) return reject(err);
        const non2xx = result.non2xx + result.errors + result.timeouts;
        resolve({
          name,
          reqPerSec: result.requests.average,
          p99: result.latency.p99,
          p50: result.latency.p50,
          total: result.requests.total,
          non2xx,
        });
      },
    );
  });
}

async function main() {
  const { createTestEnvironment, migratorFor, TEST_ADMIN_TOKEN } = appRequire('@tessera/testing');
  const { databaseOptions } = appRequire('./dist/database/database');
  const testEnv = await createTestEnvironment([
    migratorFor(databaseOptions, join(appDir, 'src/database/migrations')),
  ]);
  const children = [];
  try {
    const api = await startChild('app', testEnv.env);
    children.push(api.child);
    const baseline = await startChild('baseline', testEnv.env);
    children.push(baseline.child);

    const admin = async (path, body) => {
      const res = await fetch(`${api.url}/admin/v1${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      if (res.status !== 201) throw new Error(`${path}: ${res.status} ${await res.text()}`);
      return res.json();
    };
    const product = await admin('/products', { name: 'Bench' });
    const key = await admin(`/products/${product.id}/keys`, { environment: 'production' });
    await admin(`/products/${product.id}/levels`, {
      name: 'BENCH_KYC',
      applicantType: 'individual',
      isDefault: true,
      steps: [{ kind: 'personal_information' }, { kind: 'identity_doc' }, { kind: 'selfie' }],
    });
    const headers = {
      'content-type': 'application/json',
      'x-api-key': key.apiKey,
      'x-api-secret': key.apiSecret,
      'x-environment': 'production',
    };
    await fetch(`${api.url}/v1/applicants`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ externalUserId: 'bench-sdk', firstName: 'Bench' }),
    });
    const link = await (
      await fetch(`${api.url}/v1/applicants/bench-sdk/verifications`, {
        method: 'POST',
        headers: { ...headers, 'content-type': 'text/plain' },
      })
    ).json();
    const { token } = await (await fetch(`${api.url}/api/v1/sdk/links/${link.shortCode}`)).json();
    if (!token) throw new Error('no SDK token: the link was not minted');
    const bearer = { authorization: `Bearer ${token}` };

    await run('warm-baseline', { duration: 2, url: `${baseline.url}/baseline` });
    await run('warm-api', { duration: 2, url: `${api.url}/api/v1/sdk/session`, headers: bearer });

    const results = [];
    results.push(
      await measure('baseline: bare Fastify, one SELECT', baseline, { url: `${baseline.url}/baseline` }),
    );
    results.push(
      await measure('GET /api/v1/sdk/session', api, {
        url: `${api.url}/api/v1/sdk/session`,
        headers: bearer,
      }),
    );
    results.push(
      await measure('GET /sdk/{shortCode} (page)', api, { url: `${api.url}/sdk/${link.shortCode}` }),
    );
    const base = results[0].reqPerSec;
    console.log(`\nconnections=${args.connections} duration=${args.duration}s DB_POOL_SIZE=${POOL}`);
    console.table(
      results.map((r) => ({
        endpoint: r.name,
        'req/s': Math.round(r.reqPerSec),
        'p50 ms': r.p50,
        'p99 ms': r.p99,
        'non-2xx/errors': r.non2xx,
        'vs baseline': `${Math.round((r.reqPerSec / base) * 100)} %`,
        'server CPU ms/req': r.cpuMsPerReq.toFixed(3),
      })),
    );
  } finally {
    for (const child of children) child.kill('SIGTERM');
    await testEnv.teardown();
  }
}

if (args.role) {
  process.on('SIGTERM', () => process.exit(0));
  process.on('message', (msg) => {
    if (msg !== 'cpu') return;
    const { user, system } = process.cpuUsage();
    process.send({ cpuMs: (user + system) / 1000 });
  });
}
if (args.role === 'app') await serveApp();
else if (args.role === 'baseline') await serveBaseline();
else await main();
