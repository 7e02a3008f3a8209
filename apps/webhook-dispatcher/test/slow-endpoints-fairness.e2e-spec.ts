import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { WebhookEventPayload } from '@tessera/contracts';
import type { TestEnvironment } from '@tessera/testing';
import { DataSource } from 'typeorm';
import { dispatcherWithReceiver, event, mostAtOnce, putEndpoint, relayBatch } from './support/harness';
import { type HttpsReceiver, waitFor } from './support/https-receiver';

/**
 * Decision 0472: several slow receivers together do not hold up a healthy one. Three tenants' receivers answer
 * just under WEBHOOK_TIMEOUT_MS and get bursts of events one after the other (the first more than its share);
 * a fourth tenant's events, relayed while the slow ones hold their requests, arrive at once. Real HTTPS receiver,
 * real Postgres and Redis; events arrive as relays enqueue them, so first attempts go through the arrival path.
 */
const SLOW_MS = 6000;
/**
 * The bound on the healthy tenant's events, from their relay to their arrival: far below SLOW_MS, so an event
 * that waited for one slow request to end (the first ones end about SLOW_MS − 2 s after the healthy relay) fails.
 */
const PROMPT_MS = 1000;
const CONCURRENCY = 16;
const ENDPOINT_CONCURRENCY = 4;
/** One endpoint's share: 12 of the 16 permits. */
const SHARE = Math.max(ENDPOINT_CONCURRENCY, CONCURRENCY - ENDPOINT_CONCURRENCY);
const SLOW = { 'slow-a': 14, 'slow-b': 6, 'slow-c': 6 } as const;

let env: TestEnvironment;
let app: NestFastifyApplication;
let receiver: HttpsReceiver;
let db: DataSource;

beforeAll(async () => {
  ({ env, app, receiver } = await dispatcherWithReceiver({
    WEBHOOK_POLL_MS: '20',
    WEBHOOK_CONCURRENCY: String(CONCURRENCY),
    WEBHOOK_ENDPOINT_CONCURRENCY: String(ENDPOINT_CONCURRENCY),
    WEBHOOK_ENDPOINT_WAIT_MS: '300',
    WEBHOOK_TIMEOUT_MS: String(SLOW_MS + 1000),
  }));
  db = app.get(DataSource);
  for (const name of [...Object.keys(SLOW), 'healthy'])
    await putEndpoint(app, receiver, `tenant-${name}`, `/${name}`);
  for (const name of Object.keys(SLOW)) receiver.on(`/${name}`, { status: 200, delayMs: SLOW_MS });
  receiver.on('/healthy', { status: 200 });
}, 60_000);

afterAll(async () => {
  await app?.close();
  await env?.teardown();
  await receiver?.stop();
});

const relay = (events: WebhookEventPayload[]) => relayBatch(app, events);

it('three slow receivers saturating the requests leave a healthy tenant’s first attempts prompt', async () => {
  const slow = new Map<string, WebhookEventPayload[]>();
  // The slow tenants' bursts one after the other: the first takes its whole share; the next ones what is left
  // (before this change the second took every other permit and the third got none).
  for (const [name, count] of Object.entries(SLOW)) {
    const events = Array.from({ length: count }, () => event({ tenantId: `tenant-${name}` }));
    slow.set(name, events);
    await relay(events);
    if (name === 'slow-a')
      await waitFor(
        () => receiver.at('/slow-a').length,
        (n) => n >= SHARE,
        10_000,
      );
    await new Promise((r) => setTimeout(r, 400));
  }
  // Every slow request so far is still unanswered: the slow receivers are saturating the requests.
  expect(receiver.inFlight).toBe(receiver.requests.length);

  const t0 = Date.now();
  const healthy = Array.from({ length: 3 }, () => event({ tenantId: 'tenant-healthy' }));
  await relay(healthy);
  const arrived = await waitFor(
    () =>
      healthy.map((e) => receiver.requests.find((r) => r.headers['webhook-id'] === e.eventId)?.at ?? null),
    (times) => times.every((t) => t !== null),
    30_000,
  );
  const latencies = arrived.map((at) => at! - t0);
  for (const ms of latencies) expect(ms).toBeLessThan(PROMPT_MS);

  // Every slow delivery is still sent, once each (a slow endpoint makes progress), at most its share at a time.
  const total = [...slow.values()].reduce((n, events) => n + events.length, 0) + healthy.length;
  await waitFor(
    async () =>
      (await db.query(`SELECT count(*)::int AS n FROM webhook_deliveries WHERE status = 'delivered'`))[0].n,
    (n) => n === total,
    60_000,
  );
  for (const [name, events] of slow) {
    const ids = receiver.at(`/${name}`).map((r) => r.headers['webhook-id']);
    expect(ids).toHaveLength(events.length);
    expect(new Set(ids)).toEqual(new Set(events.map((e) => e.eventId)));
    expect(
      mostAtOnce(
        receiver.at(`/${name}`).map((r) => r.at),
        SLOW_MS - 200,
      ),
    ).toBeLessThanOrEqual(SHARE);
  }
  expect(receiver.maxInFlightOfOneId).toBe(1);
  const attempts = await db.query(
    `SELECT count(*)::int AS n, count(DISTINCT delivery_id)::int AS deliveries FROM webhook_attempts`,
  );
  expect(attempts).toEqual([{ n: total, deliveries: total }]);
}, 120_000);
