import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { TestEnvironment } from '@tessera/testing';
import { DataSource } from 'typeorm';
import {
  dispatcherWithReceiver,
  event,
  insertDue,
  mostAtOnce,
  putEndpoint,
  relayBatch,
} from './support/harness';
import { type HttpsReceiver, waitFor } from './support/https-receiver';

/**
 * Decision 0478: slow endpoints with backlogs do not take every one of the poller's slots. Three receivers answer
 * after SLOW_MS, well inside WEBHOOK_TIMEOUT_MS, and have due deliveries waiting (written as a failed attempt leaves them, so the
 * poller sends them); a healthy tenant's events, relayed while the slow requests are held, fail once each and their
 * retries (the poller's) arrive at once. Real HTTPS receiver, real Postgres and Redis.
 */
const SLOW_MS = 3000;
/** Far below SLOW_MS: a retry that waited for a slot held by a slow request took at least that. */
const PROMPT_MS = 1000;
const CONCURRENCY = 6;
/** Three slow endpoints at this many slots each fill all of CONCURRENCY. */
const ENDPOINT_CONCURRENCY = 2;
const SLOW = ['slow-a', 'slow-b', 'slow-c'] as const;
const BACKLOG = 4;

let env: TestEnvironment;
let app: NestFastifyApplication;
let receiver: HttpsReceiver;
let db: DataSource;
const endpoints = new Map<string, { endpointId: string; tenantId: string }>();

beforeAll(async () => {
  ({ env, app, receiver } = await dispatcherWithReceiver({
    WEBHOOK_POLL_MS: '20',
    WEBHOOK_CONCURRENCY: String(CONCURRENCY),
    WEBHOOK_ENDPOINT_CONCURRENCY: String(ENDPOINT_CONCURRENCY),
    // Room for a loaded CI machine: with 1 s, one slow answer once came after the timeout, and its retry made a
    // second request of the same delivery (allowed, at least once; not what this test is about).
    WEBHOOK_TIMEOUT_MS: String(SLOW_MS + 3000),
  }));
  db = app.get(DataSource);
  for (const name of [...SLOW, 'healthy'])
    endpoints.set(name, await putEndpoint(app, receiver, `tenant-${name}`, `/${name}`));
  for (const name of SLOW) receiver.on(`/${name}`, { status: 200, delayMs: SLOW_MS });
  // The healthy receiver refuses the first attempt of each of the three events, then takes everything.
  receiver.on('/healthy', { status: 503 }, { status: 503 }, { status: 503 }, { status: 200 });
}, 60_000);

afterAll(async () => {
  await app?.close();
  await env?.teardown();
  await receiver?.stop();
});

it('slow endpoints with backlogs leave a healthy endpoint’s due retries prompt', async () => {
  const slow = new Map<string, string[]>();
  for (const name of SLOW) slow.set(name, await insertDue(db, endpoints.get(name)!, BACKLOG, 1000));
  // The slow endpoints hold the poller's slots (all six before this change, five after) with their requests.
  await waitFor(
    () => receiver.inFlight,
    (n) => n >= CONCURRENCY - 1,
    10_000,
  );

  const t0 = Date.now();
  const healthy = Array.from({ length: 3 }, () => event({ tenantId: 'tenant-healthy' }));
  await relayBatch(app, healthy);
  // Each event's second request (its retry, sent by the poller) is the one that is answered 200.
  const retried = await waitFor(
    () =>
      healthy.map(
        (e) => receiver.at('/healthy').filter((r) => r.headers['webhook-id'] === e.eventId)[1]?.at ?? null,
      ),
    (times) => times.every((t) => t !== null),
    30_000,
  );
  const latencies = retried.map((at) => at! - t0);
  for (const ms of latencies) expect(ms).toBeLessThan(PROMPT_MS);

  // Every slow delivery is still sent, once each, at most ENDPOINT_CONCURRENCY of one endpoint at a time.
  await waitFor(
    async () =>
      (await db.query(`SELECT count(*)::int AS n FROM webhook_deliveries WHERE status <> 'delivered'`))[0].n,
    (n) => n === 0,
    60_000,
  );
  for (const [name, ids] of slow) {
    const sent = receiver.at(`/${name}`);
    expect(sent.map((r) => r.headers['webhook-id']).sort()).toEqual([...ids].sort());
    expect(
      mostAtOnce(
        sent.map((r) => r.at),
        SLOW_MS - 200,
      ),
    ).toBeLessThanOrEqual(ENDPOINT_CONCURRENCY);
  }
  expect(receiver.maxInFlightOfOneId).toBe(1);
  const attempts = await db.query(
    `SELECT count(*)::int AS n, count(DISTINCT delivery_id)::int AS deliveries FROM webhook_attempts`,
  );
  const deliveries = SLOW.length * BACKLOG + healthy.length;
  expect(attempts).toEqual([{ n: deliveries + healthy.length, deliveries }]);
}, 120_000);
