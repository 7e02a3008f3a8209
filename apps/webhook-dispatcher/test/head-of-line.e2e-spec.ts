import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { TestEnvironment } from '@tessera/testing';
import { DataSource } from 'typeorm';
import { dispatcherWithReceiver, insertDue, putEndpoint } from './support/harness';
import { type HttpsReceiver, waitFor } from './support/https-receiver';

/**
 * Decision 0455: the poller's deliveries to a slow receiver (answering just under the timeout) do not hold up
 * deliveries to a healthy one. Real HTTPS receiver, real Postgres; due deliveries are written as a retry would
 * leave them (pending, due), so only the poller attempts them.
 */
const SLOW_MS = 3000;
/** Far below SLOW_MS: a fast delivery that waited for a slow one took at least SLOW_MS. */
const PROMPT_MS = 1500;

let env: TestEnvironment;
let app: NestFastifyApplication;
let receiver: HttpsReceiver;
let db: DataSource;
const endpoints: Record<'slow' | 'fast', string> = { slow: '', fast: '' };

beforeAll(async () => {
  ({ env, app, receiver } = await dispatcherWithReceiver({
    WEBHOOK_POLL_MS: '20',
    WEBHOOK_CONCURRENCY: '4',
    WEBHOOK_ENDPOINT_CONCURRENCY: '2',
    WEBHOOK_TIMEOUT_MS: String(SLOW_MS + 1000),
  }));
  db = app.get(DataSource);
  for (const name of ['slow', 'fast'] as const)
    endpoints[name] = (await putEndpoint(app, receiver, `tenant-${name}`, `/${name}`)).endpointId;
  receiver.on('/slow', { status: 200, delayMs: SLOW_MS });
  receiver.on('/fast', { status: 200 });
}, 60_000);

afterAll(async () => {
  await app?.close();
  await env?.teardown();
  await receiver?.stop();
});

const due = (name: 'slow' | 'fast', count: number, agoMs = 0) =>
  insertDue(db, { endpointId: endpoints[name], tenantId: `tenant-${name}` }, count, agoMs);

/** When the receiver got each of these events (first request), once it got them all. */
async function receivedAt(eventIds: string[], timeoutMs = 20_000): Promise<number[]> {
  const first = () =>
    eventIds.map((id) => receiver.requests.find((r) => r.headers['webhook-id'] === id)?.at ?? null);
  const times = await waitFor(first, (t) => t.every((x) => x !== null), timeoutMs);
  return times as number[];
}

async function allDelivered(): Promise<void> {
  await waitFor(
    async () =>
      (await db.query(`SELECT count(*)::int AS n FROM webhook_deliveries WHERE status <> 'delivered'`))[0].n,
    (n) => n === 0,
    30_000,
  );
}

it('a delivery to a slow receiver does not hold the deliveries to a fast one that fall due meanwhile', async () => {
  const t0 = Date.now();
  await due('slow', 1, 100);
  await due('fast', 1);
  // The slow request is now held by the receiver; more deliveries of the fast endpoint fall due.
  await new Promise((r) => setTimeout(r, 300));
  const t1 = Date.now();
  const later = await due('fast', 3);
  const times = await receivedAt(later);
  for (const at of times) expect(at - t1).toBeLessThan(PROMPT_MS);
  expect(Date.now() - t0).toBeLessThan(SLOW_MS);
  await allDelivered();
  expect(receiver.maxInFlightOfOneId).toBe(1);
}, 40_000);

it('a slow receiver with many due deliveries holds at most WEBHOOK_ENDPOINT_CONCURRENCY of the slots', async () => {
  const before = receiver.at('/slow').length;
  // Six slow deliveries, due before the fast ones: claimed in order, they would take all four slots.
  await due('slow', 6, 1000);
  const t0 = Date.now();
  const fast = await due('fast', 3);
  const times = await receivedAt(fast);
  for (const at of times) expect(at - t0).toBeLessThan(PROMPT_MS);
  await allDelivered();
  expect(receiver.maxInFlightOfOneId).toBe(1);
  // Two slow requests at a time: the third began only once one of the first two had been answered.
  const slow = receiver
    .at('/slow')
    .slice(before)
    .map((r) => r.at);
  expect(slow).toHaveLength(6);
  expect(slow[2]! - slow[0]!).toBeGreaterThanOrEqual(SLOW_MS - 100);
  const attempts = await db.query(
    `SELECT count(*)::int AS n, count(DISTINCT delivery_id)::int AS deliveries FROM webhook_attempts`,
  );
  // One attempt per delivery, each recorded once: 1 + 1 + 3 of the first test, 6 + 3 of this one.
  expect(attempts).toEqual([{ n: 14, deliveries: 14 }]);
}, 60_000);
