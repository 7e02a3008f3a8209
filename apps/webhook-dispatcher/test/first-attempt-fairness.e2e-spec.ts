import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { WebhookEventPayload } from '@tessera/contracts';
import type { TestEnvironment } from '@tessera/testing';
import { DataSource } from 'typeorm';
import { WebhookMetrics } from '../src/modules/deliveries/webhook-metrics';
import { dispatcherWithReceiver, event, mostAtOnce, putEndpoint, relayBatch } from './support/harness';
import { type HttpsReceiver, waitFor } from './support/https-receiver';

/**
 * Decision 0463: a burst of relayed events to a slow receiver does not hold up the first attempts of the events
 * of a healthy one. Real HTTPS receiver, real Postgres and Redis; events arrive as relays enqueue them
 * (`webhook.events.v1` jobs), so their first attempts go through the arrival path.
 */
const SLOW_MS = 3000;
/** Far below SLOW_MS: a fast delivery that waited for a slow one took at least SLOW_MS. */
const PROMPT_MS = 1500;
const CONCURRENCY = 4;
const ENDPOINT_CONCURRENCY = 2;

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
  for (const name of ['slow', 'fast']) await putEndpoint(app, receiver, `tenant-${name}`, `/${name}`);
  receiver.on('/slow', { status: 200, delayMs: SLOW_MS });
  receiver.on('/fast', { status: 200 });
}, 60_000);

afterAll(async () => {
  await app?.close();
  await env?.teardown();
  await receiver?.stop();
});

const relay = (events: WebhookEventPayload[]) => relayBatch(app, events);

it('a burst of events to a slow receiver leaves the first attempts to a fast one prompt, and sends each once', async () => {
  const slow = Array.from({ length: 8 }, () => event({ tenantId: 'tenant-slow' }));
  await relay(slow);
  // The slow receiver now holds the requests it has; its other deliveries wait for its permits.
  await waitFor(
    () => receiver.at('/slow').length,
    (n) => n >= 1,
    10_000,
  );
  await new Promise((r) => setTimeout(r, 500));
  const t0 = Date.now();
  const fast = Array.from({ length: 3 }, () => event({ tenantId: 'tenant-fast' }));
  await relay(fast);
  const arrived = await waitFor(
    () => fast.map((e) => receiver.requests.find((r) => r.headers['webhook-id'] === e.eventId)?.at ?? null),
    (times) => times.every((t) => t !== null),
    20_000,
  );
  for (const at of arrived) expect(at! - t0).toBeLessThan(PROMPT_MS);

  // Every slow delivery is sent in the end, once, never more than the endpoint's share at a time.
  await waitFor(
    async () =>
      (await db.query(`SELECT count(*)::int AS n FROM webhook_deliveries WHERE status = 'delivered'`))[0].n,
    (n) => n === 11,
    40_000,
  );
  const slowIds = receiver.at('/slow').map((r) => r.headers['webhook-id']);
  expect(slowIds).toHaveLength(8);
  expect(new Set(slowIds)).toEqual(new Set(slow.map((e) => e.eventId)));
  expect(receiver.maxInFlightOfOneId).toBe(1);
  const share = Math.max(ENDPOINT_CONCURRENCY, CONCURRENCY - ENDPOINT_CONCURRENCY);
  expect(
    mostAtOnce(
      receiver.at('/slow').map((r) => r.at),
      SLOW_MS - 200,
    ),
  ).toBeLessThanOrEqual(share);
  // One attempt per delivery: deliveries left to the poller were given back unsent, not counted as attempts.
  const attempts = await db.query(
    `SELECT count(*)::int AS n, count(DISTINCT delivery_id)::int AS deliveries FROM webhook_attempts`,
  );
  expect(attempts).toEqual([{ n: 11, deliveries: 11 }]);
  const deferred = await app.get(WebhookMetrics).deferred.get();
  expect(deferred.values[0]?.value).toBeGreaterThan(0);
}, 60_000);
