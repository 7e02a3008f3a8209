// Webhook delivery bench: deliveries/s to a local HTTPS receiver, and the lag from outbox commit to the
// first delivery attempt at a steady 200 events/s through the real outbox relay.
//
//   pnpm build && node bench/webhooks-delivery.mjs [--events 10000] [--rate 200] [--seconds 20]
//
// Needs Postgres and Redis as in the test setup (TEST_POSTGRES_URL, TEST_REDIS_URL). The dispatcher runs
// as its own process (apps/webhook-dispatcher/dist/main.js); the receiver, the producer (appendToOutbox +
// OutboxRelay) and this script share the bench process.
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:https';
import { createRequire } from 'node:module';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(join(root, 'apps/webhook-dispatcher/package.json'));
require('reflect-metadata');
const { Client } = require('pg');
const { Queue } = require('bullmq');
const { NestFactory } = require('@nestjs/core');
const { Module } = require('@nestjs/common');
const { DataSource } = require('typeorm');
const platform = require('@tessera/platform');
const contracts = require('@tessera/contracts');
const { migrateServiceSchema } = platform;
const { databaseOptions } = require(join(root, 'apps/webhook-dispatcher/dist/database/database.js'));

const { values: args } = parseArgs({
  options: {
    events: { type: 'string', default: '10000' },
    rate: { type: 'string', default: '200' },
    seconds: { type: 'string', default: '20' },
    concurrency: { type: 'string', default: '64' },
  },
});
const PG = process.env.TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const dbName = `bench_webhooks_${process.pid}`;
const dbUrl = (() => {
  const u = new URL(PG);
  u.pathname = `/${dbName}`;
  return u.toString();
})();
const prefix = `bench-wh-${process.pid}`;

const pct = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// --- HTTPS receiver -------------------------------------------------------------------------------
const certificate = require('@tessera/testing').makeCertificate();
const arrivals = new Map(); // webhook-id -> first arrival (ms)
let received = 0;
const server = createServer({ key: certificate.key, cert: certificate.cert }, (req, res) => {
  req.resume();
  req.on('end', () => {
    received++;
    const id = req.headers['webhook-id'];
    if (!arrivals.has(id)) arrivals.set(id, performance.timeOrigin + performance.now());
    res.writeHead(200);
    res.end();
  });
});
server.keepAliveTimeout = 60_000;
await new Promise((r) => server.listen(0, '127.0.0.1', r));
const port = server.address().port;

// --- Database: dispatcher schema + a producer schema with an outbox -------------------------------
const admin = new Client({ connectionString: PG });
await admin.connect();
await admin.query(`DROP DATABASE IF EXISTS ${dbName}`);
await admin.query(`CREATE DATABASE ${dbName}`);
await migrateServiceSchema(databaseOptions(dbUrl));
class ProducerInit1700000000001 {
  name = 'ProducerInit1700000000001';
  async up(q) {
    await q.query(
      'CREATE TABLE "outbox" ("id" uuid NOT NULL PRIMARY KEY, "tenant_id" text NOT NULL, "event_type" text NOT NULL, "entity_type" text NOT NULL, "entity_id" text NOT NULL, "data" jsonb NOT NULL, "occurred_at" TIMESTAMP WITH TIME ZONE NOT NULL, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "relayed_at" TIMESTAMP WITH TIME ZONE)',
    );
    await q.query(
      'CREATE INDEX "outbox_unrelayed_idx" ON "outbox" ("created_at") WHERE "relayed_at" IS NULL',
    );
  }
  async down() {}
}
const producerDatabase = {
  schema: 'producer',
  entities: [platform.OutboxEventEntity],
  migrations: [ProducerInit1700000000001],
};
await migrateServiceSchema({ url: dbUrl, ...producerDatabase });

// --- Dispatcher process -----------------------------------------------------------------------------
const dispatcher = spawn(process.execPath, [join(root, 'apps/webhook-dispatcher/dist/main.js')], {
  env: {
    ...process.env,
    DATABASE_URL: dbUrl,
    REDIS_URL,
    QUEUE_PREFIX: prefix,
    PORT: '0',
    HOST: '127.0.0.1',
    LOG_LEVEL: 'warn',
    LOG_REQUESTS: 'false',
    SECRETS_MASTER_KEY: Buffer.alloc(32, 7).toString('base64'),
    WEBHOOK_ALLOW_PRIVATE_TARGETS: '127.0.0.1/32',
    WEBHOOK_CA_FILE: certificate.certFile,
    WEBHOOK_CONCURRENCY: args.concurrency,
    DB_POOL_SIZE: '30',
  },
  stdio: ['ignore', 'ignore', 'inherit'],
});
const rpc = new platform.RpcClient(REDIS_URL, prefix);
const anyReply = contracts.rpcResult(require('zod').any());
for (let i = 0; ; i++) {
  try {
    const put = await rpc.send(
      contracts.WEBHOOK_RPC.PUT_ENDPOINT,
      { tenantId: 'bench', source: 'custody', body: { url: `https://127.0.0.1:${port}/hook` } },
      anyReply,
      1000,
    );
    if (!put.ok) throw new Error(JSON.stringify(put.error));
    break;
  } catch (err) {
    if (i > 60) throw err;
    await sleep(500);
  }
}

const event = (i) => ({
  eventId: randomUUID(),
  source: 'custody',
  tenantId: 'bench',
  eventType: 'balance.updated',
  entityType: 'balance',
  entityId: `${randomUUID()}:${i}`,
  occurredAt: new Date().toISOString(),
  data: { vaultAccountId: randomUUID(), assetId: randomUUID() },
});

async function waitUntil(fn, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  while (!fn()) {
    if (Date.now() > deadline) return false;
    await sleep(10);
  }
  return true;
}

// --- Phase 1: throughput ----------------------------------------------------------------------------
const N = Number(args.events);
const queue = new Queue(contracts.JOBS.WEBHOOK_EVENT.queue, {
  connection: { url: REDIS_URL },
  prefix: platform.bullPrefix(prefix),
});
// Warm-up: connections and caches.
await queue.addBulk(
  Array.from({ length: 200 }, (_, i) => event(i)).map((e) => ({
    name: contracts.JOBS.WEBHOOK_EVENT.name,
    data: e,
    opts: { jobId: e.eventId },
  })),
);
await waitUntil(() => arrivals.size >= 200, 30_000);
arrivals.clear();
const events = Array.from({ length: N }, (_, i) => event(i));
const t0 = performance.timeOrigin + performance.now();
for (let i = 0; i < N; i += 1000) {
  await queue.addBulk(
    events.slice(i, i + 1000).map((e) => ({
      name: contracts.JOBS.WEBHOOK_EVENT.name,
      data: e,
      opts: { jobId: e.eventId, removeOnComplete: true },
    })),
  );
}
const tEnqueued = performance.timeOrigin + performance.now();
const ok = await waitUntil(() => arrivals.size >= N, 300_000);
const tDone = Math.max(...arrivals.values());
const throughput = {
  events: N,
  delivered: arrivals.size,
  complete: ok,
  enqueueSeconds: +((tEnqueued - t0) / 1000).toFixed(2),
  deliverySeconds: +((tDone - t0) / 1000).toFixed(2),
  deliveriesPerSecond: Math.round(arrivals.size / ((tDone - t0) / 1000)),
};
console.log(JSON.stringify({ phase: 'throughput (enqueue -> HTTPS receiver)', ...throughput }));

// --- Phase 2: lag from outbox commit to first attempt at a steady rate --------------------------------
class ProducerModule {}
Module({})(ProducerModule);
const env = platform.loadConfig(platform.baseEnvSchema, {
  DATABASE_URL: dbUrl,
  REDIS_URL,
  QUEUE_PREFIX: prefix,
  PORT: '0',
  LOG_LEVEL: 'warn',
  LOG_REQUESTS: 'false',
});
const producerApp = await NestFactory.createApplicationContext(
  {
    module: ProducerModule,
    imports: [
      platform.PlatformModule.forRoot({
        service: 'bench-producer',
        env,
        errorShape: 'custody',
        database: producerDatabase,
      }),
      platform.OutboxRelayModule.forRoot({ source: 'custody', pollMs: 1000 }),
    ],
  },
  { logger: ['error', 'warn'] },
);
await producerApp.init();
const producerDb = producerApp.get(DataSource);
arrivals.clear();
const rate = Number(args.rate);
const seconds = Number(args.seconds);
const committed = new Map();
const start = performance.now();
let sent = 0;
const inflight = [];
while (performance.now() - start < seconds * 1000) {
  const due = Math.floor(((performance.now() - start) / 1000) * rate);
  while (sent < due) {
    const i = sent++;
    inflight.push(
      producerDb
        .transaction((m) =>
          platform.appendToOutbox(m, [
            {
              tenantId: 'bench',
              eventType: 'balance.updated',
              entityType: 'balance',
              entityId: `lag:${i}`,
              data: { vaultAccountId: randomUUID(), assetId: randomUUID() },
            },
          ]),
        )
        .then(([id]) => committed.set(id, performance.timeOrigin + performance.now())),
    );
  }
  await sleep(2);
}
await Promise.all(inflight);
await waitUntil(() => [...committed.keys()].every((id) => arrivals.has(id)), 60_000);
const lags = [...committed.entries()]
  .filter(([id]) => arrivals.has(id))
  .map(([id, t]) => arrivals.get(id) - t)
  .sort((a, b) => a - b);
console.log(
  JSON.stringify({
    phase: `lag (outbox commit -> first attempt received) at ${rate} events/s for ${seconds} s`,
    events: committed.size,
    delivered: lags.length,
    p50Ms: +pct(lags, 50).toFixed(1),
    p90Ms: +pct(lags, 90).toFixed(1),
    p99Ms: +pct(lags, 99).toFixed(1),
    maxMs: +lags[lags.length - 1].toFixed(1),
  }),
);

await producerApp.close();
await queue.close();
await rpc.onApplicationShutdown();
dispatcher.kill('SIGTERM');
await new Promise((r) => dispatcher.once('exit', r));
server.closeAllConnections();
server.close();
await admin.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
await admin.end();
const redis = new (require('ioredis'))(REDIS_URL);
const keys = await redis.keys(`*${prefix}*`);
if (keys.length) await redis.del(...keys);
await redis.quit();
process.exit(0);
