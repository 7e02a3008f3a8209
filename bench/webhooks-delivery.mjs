#!/usr/bin/env node
// Bench "webhooks": the real webhook-dispatcher (apps/webhook-dispatcher/dist/main.js, its own process) at each
// WEBHOOK_CONCURRENCY of the scale curve, delivering a backlog of webhook.events jobs to a local HTTPS receiver,
// beside raw undici HTTPS POSTs to the same receiver from one process with as many connections (the ceiling);
// then the lag from outbox commit to the first delivery attempt at a steady 200 events/s through production's
// path: rows appended by libs/platform appendToOutbox into custody's real outbox (custody's migrations), the
// relay woken after each commit by the producer's NOTIFY as custody's API wakes it (outbox-wake.ts, decision
// 0403), relayed by the real OutboxRelay in custody's worker process (apps/custody-api/dist/worker.js),
// delivered by the dispatcher.
//
//   pnpm build && node bench/webhooks-delivery.mjs [--duration 5] [--connections 10,50,200]
//
// The receiver runs in this process and records each webhook-id's first arrival.
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:https';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { standalone } from './lib/bench.mjs';
import { alternate, percentile as pct, slicesOf } from './lib/load.mjs';
import { DEPLOYED_LOGGING, freePort, postgresCpu, requireFrom, root, startServer } from './lib/proc.mjs';
import { figure, progress } from './lib/report.mjs';

const require = requireFrom('apps/webhook-dispatcher');
const custodyRequire = requireFrom('apps/custody-api');
const LAG_RATE = 200;
const LAG_WARM_SECONDS = 2;

async function waitUntil(fn, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  while (!fn()) {
    if (Date.now() > deadline) return false;
    await sleep(10);
  }
  return true;
}

function startReceiver(certificate) {
  const arrivals = new Map(); // webhook-id -> first arrival (ms, epoch)
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
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({
        arrivals,
        received: () => received,
        url: `https://127.0.0.1:${server.address().port}/hook`,
        close: () => {
          server.closeAllConnections();
          server.close();
        },
      }),
    ),
  );
}

export const bench = {
  name: 'webhooks',
  description: 'webhook dispatcher deliveries vs raw undici HTTPS POSTs; outbox commit → first attempt lag',
  async run(ctx) {
    require('reflect-metadata');
    require('@nestjs/common').Logger.overrideLogger(['error', 'warn']);
    const testing = require('@tessera/testing');
    const platform = require('@tessera/platform');
    const contracts = require('@tessera/contracts');
    const { Queue } = require('bullmq');
    const { DataSource } = custodyRequire('typeorm');
    const dispatcherDb = require(join(root, 'apps/webhook-dispatcher/dist/database/database.js'));
    const custodyDb = custodyRequire(join(root, 'apps/custody-api/dist/database/database.js'));
    const testEnv = await testing.createTestEnvironment([
      testing.migratorFor(
        dispatcherDb.databaseOptions,
        join(root, 'apps/webhook-dispatcher/src/database/migrations'),
      ),
      testing.migratorFor(custodyDb.databaseOptions, join(root, 'apps/custody-api/src/database/migrations')),
    ]);
    const certificate = testing.makeCertificate();
    const receiver = await startReceiver(certificate);
    const figures = [];
    const cleanups = [() => receiver.close(), () => testEnv.teardown()];
    try {
      const env = {
        ...testEnv.env,
        ...DEPLOYED_LOGGING,
        NODE_ENV: 'production',
        WEBHOOK_ALLOW_PRIVATE_TARGETS: '127.0.0.1/32',
        WEBHOOK_CA_FILE: certificate.certFile,
        DB_POOL_SIZE: '30',
      };
      const startDispatcher = async (concurrency) => {
        const port = await freePort();
        return startServer(`dispatcher-c${concurrency}`, join(root, 'apps/webhook-dispatcher/dist/main.js'), {
          env: { ...env, PORT: String(port), WEBHOOK_CONCURRENCY: String(concurrency) },
          readyUrl: `http://127.0.0.1:${port}/health`,
          profile: true,
        });
      };
      const rpc = new platform.RpcClient(env.REDIS_URL, env.QUEUE_PREFIX);
      cleanups.unshift(() => rpc.onApplicationShutdown());
      const queue = new Queue(contracts.JOBS.WEBHOOK_EVENT.queue, {
        connection: { url: env.REDIS_URL },
        prefix: platform.bullPrefix(env.QUEUE_PREFIX),
      });
      cleanups.unshift(() => queue.close());
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
      // The backlog goes in as the outbox relay enqueues it: `webhook.events.v1` jobs of up to 100 events
      // (libs/platform webhookEventJobs, decision 0402), 10 jobs per Redis round trip.
      const enqueue = async (events) => {
        const jobs = platform.webhookEventJobs(events);
        for (let i = 0; i < jobs.length; i += 10)
          await queue.addBulk(
            jobs.slice(i, i + 10).map((j) => ({
              name: contracts.JOBS.WEBHOOK_EVENTS.name,
              data: j.payload,
              opts: { jobId: j.jobId, removeOnComplete: true },
            })),
          );
      };
      const poster = await startServer('raw-poster', join(root, 'bench/lib/raw-poster.mjs'));
      const rawPost = (count, connections) =>
        new Promise((resolve) => {
          const onMsg = (m) => {
            if (m?.type === 'posted') {
              poster.child.off('message', onMsg);
              resolve(m);
            }
          };
          poster.child.on('message', onMsg);
          poster.child.send({
            type: 'post',
            url: receiver.url,
            count,
            connections,
            caFile: certificate.certFile,
          });
        });

      let dispatcher;
      for (const c of ctx.connections) {
        progress(`webhooks: concurrency ${c}`);
        dispatcher = await startDispatcher(c);
        if (c === ctx.connections[0]) {
          const anyReply = contracts.rpcResult(require('zod').any());
          const put = await rpc.send(
            contracts.WEBHOOK_RPC.PUT_ENDPOINT,
            { tenantId: 'bench', source: 'custody', body: { url: receiver.url } },
            anyReply,
            10_000,
          );
          if (!put.ok) throw new Error(JSON.stringify(put.error));
        }
        // Raw ceiling and dispatcher in alternating slices, raw first (load.mjs alternate, as interleaved does
        // for the HTTP figures): each side warms up and probes its rate first, then ~duration seconds of work in
        // all, cut into slices.
        const drain = async (count) => {
          receiver.arrivals.clear();
          const batch = Array.from({ length: count }, (_, i) => event(i));
          const cpu0 = await dispatcher.cpuMs();
          const postgresSince = postgresCpu();
          const t0 = performance.timeOrigin + performance.now();
          await enqueue(batch);
          const complete = await waitUntil(() => receiver.arrivals.size >= count, 300_000);
          const tDone = Math.max(...receiver.arrivals.values());
          const cpu = (await dispatcher.cpuMs()) - cpu0;
          // The attempt records of the last deliveries may still be in flight: Postgres' share is read after them.
          await sleep(50);
          const postgres = postgresSince();
          return {
            count,
            done: receiver.arrivals.size,
            seconds: (tDone - t0) / 1000,
            cpu,
            postgres,
            complete,
          };
        };
        const rawSlice = async (count) => {
          const cpu0 = await poster.cpuMs();
          const postgresSince = postgresCpu();
          const r = await rawPost(count, c);
          return {
            count,
            done: count - r.failed,
            seconds: r.seconds,
            cpu: (await poster.cpuMs()) - cpu0,
            postgres: postgresSince(),
            failed: r.failed,
          };
        };
        await rawPost(500, c);
        const rawProbe = await rawPost(1000, c);
        const warm = await drain(300);
        const probe = await drain(1000);
        if (!warm.complete || !probe.complete)
          throw new Error('the warm-up events were not delivered within 300 s');
        const slices = slicesOf(ctx.duration);
        const rawCount = Math.max(250, Math.round(((1000 / rawProbe.seconds) * ctx.duration) / slices));
        const n = Math.max(250, Math.round(((1000 / probe.seconds) * ctx.duration) / slices));
        const [raws, drains] = await alternate(slices, (side) =>
          side === 0 ? rawSlice(rawCount) : drain(n),
        );
        const total = (list, f) => list.reduce((sum, p) => sum + f(p), 0);
        const rawRate = total(raws, (p) => p.done) / total(raws, (p) => p.seconds);
        const rawCpuPerPost = total(raws, (p) => p.cpu) / total(raws, (p) => p.count);
        const rawFailed = total(raws, (p) => p.failed);
        const rawPostgresPerPost = total(raws, (p) => p.postgres) / total(raws, (p) => p.count);
        const rate = total(drains, (p) => p.done) / total(drains, (p) => p.seconds);
        const cpuPerDelivery = total(drains, (p) => p.cpu) / total(drains, (p) => p.count);
        const undelivered = total(drains, (p) => p.count - p.done);
        const postgresPerDelivery = total(drains, (p) => p.postgres) / total(drains, (p) => p.count);
        progress(
          `  raw undici POSTs c=${c}: ${Math.round(rawRate)}/s, ${rawCpuPerPost.toFixed(3)} CPU ms each, Postgres ${rawPostgresPerPost.toFixed(3)} CPU ms each (${slices} slices)`,
        );
        progress(
          `  dispatcher c=${c}: ${Math.round(rate)} deliveries/s, ${cpuPerDelivery.toFixed(3)} CPU ms each, Postgres ${postgresPerDelivery.toFixed(3)} CPU ms each (${slices} × ${n} events)`,
        );
        figures.push(
          figure({
            key: `webhooks.delivery.c${c}`,
            bench: 'webhooks',
            series: 'delivery',
            connections: c,
            rows: 'empty',
            figure: `webhook deliveries, concurrency ${c}`,
            unit: '/s',
            value: rate,
            baseline: rawRate,
            baselineLabel: 'raw POST',
            cpuMsPerReq: cpuPerDelivery,
            baselineCpuMsPerReq: rawCpuPerPost,
            postgresCpuMsPerReq: postgresPerDelivery,
            baselinePostgresCpuMsPerReq: rawPostgresPerPost,
            anomalies: undelivered + rawFailed,
            events: n * slices,
            goal: { ratioAtLeast: 0.5 },
          }),
        );
        if (c !== ctx.connections[ctx.connections.length - 1]) await dispatcher.stop();
      }
      await poster.stop();

      // Lag: a steady LAG_RATE events/s into custody's real outbox; the real relay in custody's worker.
      progress(
        `webhooks: outbox commit → first attempt at ${LAG_RATE} events/s for ${Math.max(5, ctx.duration * 2)} s`,
      );
      const workerPort = await freePort();
      const relay = await startServer('custody-worker', join(root, 'apps/custody-api/dist/worker.js'), {
        env: { ...env, DB_POOL_SIZE: '10', WORKER_PORT: String(workerPort), CHAIN_SIM_BLOCK_MS: '0' },
        readyUrl: `http://127.0.0.1:${workerPort}/health`,
      });
      // Custody's API's pool, as the services configure theirs (serviceDataSourceOptions: session options, pool
      // that keeps its connections, decision 0416; the wake-after-commit subscriber).
      const producer = new DataSource(
        platform.serviceDataSourceOptions({
          url: env.DATABASE_URL,
          schema: 'custody',
          entities: [platform.OutboxEventEntity],
          migrations: [],
          poolSize: 20,
        }),
      );
      await producer.initialize();
      cleanups.unshift(() => producer.destroy());
      // As in custody's API: no relay in this process, so commits are followed by a NOTIFY, one at a time and
      // paced like the relay's passes, as PlatformModule paces the API's (decision 0419).
      platform.paceOutboxWakes(
        producer,
        platform.baseEnvSchema.shape.OUTBOX_RELAY_MIN_INTERVAL_MS.parse(
          process.env.OUTBOX_RELAY_MIN_INTERVAL_MS,
        ),
      );
      const triggers = await producer.query(
        `SELECT tgname FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid JOIN pg_namespace n ON n.oid = c.relnamespace
          WHERE n.nspname = 'custody' AND c.relname = 'outbox' AND t.tgname = 'outbox_notify'`,
      );
      if (triggers.length > 0) throw new Error('custody.outbox still has the notify trigger (decision 0403)');
      // A steady LAG_RATE events/s for `seconds`: each event's lag is its first arrival at the receiver minus
      // the moment its producing commit returned. Undelivered events are left out of the lags and counted.
      const steady = async (seconds, tag) => {
        receiver.arrivals.clear();
        const committed = new Map();
        const start = performance.now();
        let sent = 0;
        const inflight = [];
        while (performance.now() - start < seconds * 1000) {
          const due = Math.floor(((performance.now() - start) / 1000) * LAG_RATE);
          while (sent < due) {
            const i = sent++;
            inflight.push(
              producer
                .transaction((m) =>
                  platform.appendToOutbox(m, [
                    {
                      tenantId: 'bench',
                      eventType: 'balance.updated',
                      entityType: 'balance',
                      entityId: `${tag}:${i}`,
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
        await waitUntil(() => [...committed.keys()].every((id) => receiver.arrivals.has(id)), 60_000);
        const lags = [...committed.entries()]
          .filter(([id]) => receiver.arrivals.has(id))
          .map(([id, t]) => receiver.arrivals.get(id) - t)
          .sort((a, b) => a - b);
        return {
          lags,
          events: committed.size,
          missing: committed.size - lags.length,
          rate: committed.size / seconds,
        };
      };
      // The relay's process has just started: its first second carries its connects, the first BullMQ script
      // loads and cold code (300 ms lags on this machine). As every other figure warms up before it is measured,
      // so does this one, at the same rate; the warm-up's own p99 is printed and kept (coldP99Ms), not hidden.
      const warm = await steady(LAG_WARM_SECONDS, 'lag-warm');
      const { lags, events, missing, rate } = await steady(Math.max(5, ctx.duration * 2), 'lag');
      progress(
        `  lag: ${events} events (${rate.toFixed(0)}/s), p50 ${pct(lags, 50).toFixed(1)} ms, p99 ${pct(lags, 99).toFixed(1)} ms; ` +
          `warm-up ${warm.events} events just after the relay started: p50 ${pct(warm.lags, 50).toFixed(1)} ms, p99 ${pct(warm.lags, 99).toFixed(1)} ms`,
      );
      for (const [p, goal] of [
        [50, undefined],
        [99, { valueAtMost: 100, unit: 'ms' }],
      ])
        figures.push(
          figure({
            key: `webhooks.lag.p${p}`,
            bench: 'webhooks',
            figure: `outbox commit → first attempt p${p}, ${LAG_RATE} events/s`,
            unit: 'ms',
            value: pct(lags, p),
            anomalies: missing + warm.missing,
            events,
            coldP99Ms: p === 99 ? pct(warm.lags, 99) : undefined,
            goal: goal && { ...goal, zeroAnomalies: true },
          }),
        );
      await relay.stop();
      await dispatcher?.stop();
    } finally {
      for (const c of cleanups)
        await Promise.resolve()
          .then(c)
          .catch(() => undefined);
    }
    return figures;
  },
};

await standalone(import.meta.url, bench);
