#!/usr/bin/env node
// Bench: POST /v1/applicants and GET /v1/applicants/{id}/status of verification-api, beside a bare Fastify
// server doing a single INSERT, measured in the same run against the same Postgres (autocannon 9).
//
//   pnpm build && node bench/verification-applicants.mjs [--connections 50] [--duration 10]
//
// Each server runs in its own child process so autocannon does not share their event loop.
import autocannon from 'autocannon';
import { fork } from 'node:child_process';
import { randomUUID } from 'node:crypto';
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
        // Raised for the bench only; the default is 600 per minute per credential.
        RATE_LIMIT_PER_CREDENTIAL_PER_MINUTE: '100000000',
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
  await pool.query(
    'CREATE TABLE IF NOT EXISTS public.bench_baseline (id uuid PRIMARY KEY DEFAULT gen_random_uuid(), external_user_id text UNIQUE NOT NULL, data jsonb NOT NULL)',
  );
  const app = Fastify({ logger: false });
  app.post('/baseline', async (request, reply) => {
    const { rows } = await pool.query(
      'INSERT INTO public.bench_baseline (external_user_id, data) VALUES ($1, $2) RETURNING id',
      [request.body.externalUserId, JSON.stringify(request.body)],
    );
    reply.status(201);
    return { id: rows[0].id };
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

const uniqueBody = (prefix) => (req) => ({
  ...req,
  body: JSON.stringify({
    externalUserId: `${prefix}-${randomUUID()}`,
    firstName: 'Bench',
    lastName: 'User',
    email: 'b@x.test',
  }),
});

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
      body: JSON.stringify({ externalUserId: 'bench-status' }),
    });

    const warm = { duration: 2 };
    await run('warm-baseline', {
      ...warm,
      url: `${baseline.url}/baseline`,
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      requests: [{ setupRequest: uniqueBody('w') }],
    });
    await run('warm-api', {
      ...warm,
      url: `${api.url}/v1/applicants`,
      method: 'POST',
      headers,
      requests: [{ setupRequest: uniqueBody('w') }],
    });

    const results = [];
    results.push(
      await measure('baseline: bare Fastify, single INSERT', baseline, {
        url: `${baseline.url}/baseline`,
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        requests: [{ setupRequest: uniqueBody('b') }],
      }),
    );
    results.push(
      await measure('POST /v1/applicants', api, {
        url: `${api.url}/v1/applicants`,
        method: 'POST',
        headers,
        requests: [{ setupRequest: uniqueBody('a') }],
      }),
    );
    results.push(
      await measure('GET /v1/applicants/{id}/status', api, {
        url: `${api.url}/v1/applicants/bench-status/status`,
        method: 'GET',
        headers,
      }),
    );
    if (process.env.BENCH_FLOOR) {
      // The framework floor: no auth, no database (Nest + Fastify + platform hooks only).
      results.push(
        await measure('GET /docs (no auth, no DB)', api, { url: `${api.url}/docs`, method: 'GET' }),
      );
      // Auth guard + Redis rate limit + cached level: no database round trip.
      results.push(
        await measure('GET /v1/levels/BENCH_KYC (auth + Redis, cached)', api, {
          url: `${api.url}/v1/levels/BENCH_KYC`,
          method: 'GET',
          headers,
        }),
      );
    }
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
    const create = results[1];
    console.log(
      `create: ${Math.round((create.reqPerSec / base) * 100)} % of baseline (goal >= 60 %), p99 ${create.p99} ms (goal <= 50 ms)`,
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
