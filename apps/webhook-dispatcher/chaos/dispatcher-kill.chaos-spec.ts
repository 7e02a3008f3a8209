import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { JOBS, rpcResult, WEBHOOK_RPC, type WebhookEventPayload } from '@tessera/contracts';
import { bullPrefix, RpcClient, webhookEventJobs } from '@tessera/platform';
import { createTestEnvironment, kill9, seededPercents, type TestEnvironment } from '@tessera/testing';
import { Queue } from 'bullmq';
import { Client } from 'pg';
import { z } from 'zod';
import { dispatcherMigrator } from '../test/support/harness';
import { HttpsReceiver, makeCertificate, waitFor } from '../test/support/https-receiver';

/**
 * Chaos (issue 15): CHAOS_EVENTS events (10,000 by default, the figure, run by CI; about 40 s on the
 * shared 2-core machine, see docs/reliability.md); the dispatcher
 * (built dist/main.js, a child process) is killed with SIGKILL at KILLS random moments (fixed seed, printed) and started again each time. Every
 * event must reach the receiver at least once and end `delivered`, and the received count never stands still
 * longer than STALL_BOUND_MS (a dead dispatcher's jobs run again soon). Bounded: the run's budget grows with the
 * event count (BUDGET_MS) and the suite stops itself.
 *
 * What kept 10,000 out of reach before, and what replaced it: the kill moments polled the receiver by
 * rebuilding a Set of every request's webhook-id every 25 ms, and the end polled "has every id arrived" the
 * same way (O(events) per poll, O(events²) over the run, on the test's own event loop that also serves the
 * receiver). Now the receiver's requests are read once each through a cursor into one Set, progress is
 * printed, and the end is one SQL count per poll on webhook_deliveries.
 */
const MAIN = join(__dirname, '../dist/main.js');
const TOTAL = Number(process.env.CHAOS_EVENTS ?? 10_000);
const KILLS = 3;
const SEED = Number(process.env.CHAOS_SEED ?? 1795290016);
/** 60 s plus 30 ms per event: 360 s for 10,000 on a loaded 2-core machine (it takes far less alone). */
const BUDGET_MS = 60_000 + TOTAL * 30;
/**
 * The longest the received count may stand still once events flow: the dispatcher's BullMQ lock (15 s) and two
 * stalled-job checks (5 s apart) before a dead dispatcher's jobs run again, plus 15 s for the restart and slack.
 * With BullMQ's defaults (a 30 s lock, a check every 30 s) it stood still 45–60 s after a kill.
 */
const STALL_BOUND_MS = 40_000;

let env: TestEnvironment;
let receiver: HttpsReceiver;
let childEnv: Record<string, string>;
const children: ChildProcess[] = [];

function startDispatcher(): ChildProcess {
  const child = spawn(process.execPath, [MAIN], {
    env: { ...process.env, ...childEnv },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  child.stderr!.on('data', () => undefined);
  children.push(child);
  return child;
}

beforeAll(async () => {
  if (!existsSync(MAIN)) throw new Error(`${MAIN} is missing: run pnpm build first`);
  const cert = makeCertificate();
  receiver = new HttpsReceiver(cert);
  await receiver.start();
  env = await createTestEnvironment([dispatcherMigrator()]);
  childEnv = {
    ...env.env,
    LOG_LEVEL: 'warn',
    WEBHOOK_ALLOW_PRIVATE_TARGETS: '127.0.0.1/32',
    WEBHOOK_CA_FILE: cert.certFile,
    WEBHOOK_LEASE_MS: '2000',
    // A request fits inside the short lease (the dispatcher refuses to boot otherwise, decision 0452).
    WEBHOOK_TIMEOUT_MS: '1500',
    WEBHOOK_POLL_MS: '200',
    WEBHOOK_TIME_SCALE: '0.01',
  };
});

afterAll(async () => {
  for (const c of children) await kill9(c);
  await env?.teardown();
  await receiver?.stop();
});

it(
  `delivers all ${TOTAL} events at least once across ${KILLS} kill -9 of the dispatcher`,
  async () => {
    // The kill moments, as fractions of the events received, drawn from the fixed seed.
    const started = Date.now();
    const moments = seededPercents(SEED, KILLS);
    process.stdout.write(
      `chaos dispatcher: seed ${SEED}, ${TOTAL} events, kills at ${moments.join('%, ')}%\n`,
    );
    let child = startDispatcher();
    const rpc = new RpcClient(env.env.REDIS_URL!, env.env.QUEUE_PREFIX!);
    const queue = new Queue(JOBS.WEBHOOK_EVENTS.queue, {
      connection: { url: env.env.REDIS_URL } as never,
      prefix: bullPrefix(env.env.QUEUE_PREFIX!),
    });
    try {
      await waitFor(
        () =>
          rpc
            .send(WEBHOOK_RPC.GET_ENDPOINT, { tenantId: 'chaos', source: 'custody' }, rpcResult(z.any()), 500)
            .then(
              () => true,
              () => false,
            ),
        (ok) => ok,
        30_000,
      );
      const put = await rpc.send(
        WEBHOOK_RPC.PUT_ENDPOINT,
        { tenantId: 'chaos', source: 'custody', body: { url: `https://127.0.0.1:${receiver.port}/chaos` } },
        rpcResult(z.any()),
      );
      expect(put.ok).toBe(true);
      const events: WebhookEventPayload[] = Array.from({ length: TOTAL }, (_, i) => ({
        eventId: randomUUID(),
        source: 'custody',
        tenantId: 'chaos',
        eventType: 'balance.updated',
        entityType: 'balance',
        entityId: `${randomUUID()}:${i}`,
        occurredAt: new Date().toISOString(),
        data: { vaultAccountId: randomUUID(), assetId: randomUUID() },
      }));
      // As the outbox relay enqueues them: jobs of up to 100 events (decision 0402).
      const jobs = webhookEventJobs(events);
      for (let i = 0; i < jobs.length; i += 20) {
        await queue.addBulk(
          jobs.slice(i, i + 20).map((j) => ({
            name: JOBS.WEBHOOK_EVENTS.name,
            data: j.payload,
            opts: { jobId: j.jobId },
          })),
        );
      }
      // The ids received so far, each request read once (a cursor into the receiver's list).
      const seen = new Set<string>();
      let cursor = 0;
      const unique = () => {
        const all = receiver.requests;
        for (; cursor < all.length; cursor++) {
          if (all[cursor]!.path === '/chaos') seen.add(all[cursor]!.headers['webhook-id'] as string);
        }
        return seen.size;
      };
      const progress = setInterval(() => {
        process.stdout.write(
          `chaos dispatcher: ${unique()}/${TOTAL} received after ${Date.now() - started} ms\n`,
        );
      }, 15_000);
      // The longest time the received count stood still before every event had arrived.
      let last = { n: 0, at: Date.now() };
      let longestStallMs = 0;
      const watch = setInterval(() => {
        const n = unique();
        if (n > last.n || n === 0 || n >= TOTAL) last = { n, at: Date.now() };
        else longestStallMs = Math.max(longestStallMs, Date.now() - last.at);
      }, 250);
      let kills = 0;
      // One budget for the whole run (the suite must stop itself): every wait takes what is left of it.
      const deadline = started + BUDGET_MS;
      const left = () => Math.max(1_000, deadline - Date.now());
      const db = new Client({ connectionString: env.env.DATABASE_URL });
      await db.connect();
      try {
        for (const percent of moments) {
          await waitFor(unique, (n) => n >= (TOTAL * percent) / 100, left());
          await kill9(child);
          kills++;
          child = startDispatcher();
        }
        // Every event received: one count, polled.
        await waitFor(unique, (n) => n >= TOTAL, left()).catch(() => undefined);
        const missing = events.filter((e) => !seen.has(e.eventId)).map((e) => e.eventId);
        expect(missing).toEqual([]);
        clearInterval(watch);
        expect(longestStallMs).toBeLessThan(STALL_BOUND_MS);
        // And every delivery ends `delivered`: one SQL count per poll, not one wait per event.
        const statusCounts = () =>
          db
            .query(
              `SELECT status, count(*)::int AS n FROM webhooks.webhook_deliveries GROUP BY status ORDER BY status`,
            )
            .then((r) => r.rows as { status: string; n: number }[]);
        const rows = await waitFor(
          statusCounts,
          (r) => r.length === 1 && r[0]!.status === 'delivered' && r[0]!.n === TOTAL,
          Math.min(60_000, left()),
        ).catch(() => statusCounts());
        expect(rows).toEqual([{ status: 'delivered', n: TOTAL }]);
      } finally {
        clearInterval(progress);
        clearInterval(watch);
        await db.end();
      }
      process.stdout.write(
        `chaos dispatcher: ${TOTAL} events, ${kills} kills, 0 lost, ` +
          `${receiver.at('/chaos').length - TOTAL} duplicate deliveries (at-least-once), ` +
          `longest stand-still ${longestStallMs} ms, ${Date.now() - started} ms\n`,
      );
    } finally {
      await queue.close();
      await rpc.onApplicationShutdown();
      await kill9(child);
    }
  },
  BUDGET_MS + 30_000,
);
