import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { WEBHOOK_RPC } from '@tessera/contracts';
import type { TestEnvironment } from '@tessera/testing';
import { DataSource } from 'typeorm';
import { dispatcherWithReceiver, enqueue, event, rpc } from './support/harness';
import { type HttpsReceiver, waitFor } from './support/https-receiver';

/**
 * Decision 0452: one delivery never has two requests in flight from live workers. A slow HTTPS receiver holds
 * an attempt while a partner's retry, or the lease running out, would start a second one.
 */
describe('a retry of a delivery whose attempt is in flight', () => {
  let env: TestEnvironment;
  let app: NestFastifyApplication;
  let other: NestFastifyApplication;
  let receiver: HttpsReceiver;
  const scope = { tenantId: 'tenant-slow-retry', source: 'custody' as const };

  beforeAll(async () => {
    // Two replicas, as deployed: one poller holds the slow attempt, the other is free to take a due delivery.
    let replica: () => Promise<NestFastifyApplication>;
    ({ env, app, receiver, replica } = await dispatcherWithReceiver({ WEBHOOK_POLL_MS: '20' }));
    other = await replica();
    const put = await rpc(app, WEBHOOK_RPC.PUT_ENDPOINT, { ...scope, body: { url: receiver.url('/slow') } });
    expect(put.ok).toBe(true);
  }, 60_000);

  afterAll(async () => {
    await other?.close();
    await app?.close();
    await env?.teardown();
    await receiver?.stop();
  });

  it('waits for that attempt: no second POST beside it, and the fresh cycle follows at once', async () => {
    // Attempt 1 fails at once; attempt 2 (the poller's retry) is held 1.5 s, then fails; then 200.
    receiver.on('/slow', { status: 500 }, { status: 500, delayMs: 1500 }, { status: 200 });
    const e = event(scope);
    await enqueue(app, e);
    await waitFor(
      () => receiver.at('/slow').length,
      (n) => n === 2,
    );
    const db = app.get(DataSource);
    const [{ id }] = await db.query('SELECT id FROM webhook_deliveries WHERE event_id = $1', [e.eventId]);
    const retried = await rpc(app, WEBHOOK_RPC.RETRY_DELIVERY, { ...scope, id });
    expect(retried).toMatchObject({ ok: true, result: { id, status: 'pending' } });

    const done = await waitFor(
      async () => (await db.query('SELECT status FROM webhook_deliveries WHERE id = $1', [id]))[0].status,
      (status) => status === 'delivered',
    );
    expect(done).toBe('delivered');
    expect(receiver.maxInFlightOfOneId).toBe(1);
    const received = receiver.at('/slow');
    expect(received).toHaveLength(3);
    // The third request started only once the held one had been answered (1.5 s after it arrived).
    expect(received[2]!.at - received[1]!.at).toBeGreaterThanOrEqual(1400);
    const attempts = await db.query(
      'SELECT attempt_number AS n, http_status_code AS code FROM webhook_attempts WHERE delivery_id = $1 ORDER BY 1',
      [id],
    );
    expect(attempts).toEqual([
      { n: 1, code: 500 },
      { n: 2, code: 500 },
      { n: 3, code: 200 },
    ]);
  });
});

describe('a claim whose lease runs out while its request waits for a permit', () => {
  let env: TestEnvironment;
  let app: NestFastifyApplication;
  let receiver: HttpsReceiver;
  const scope = { tenantId: 'tenant-short-lease', source: 'custody' as const };

  beforeAll(async () => {
    // Two requests at once, each held 1.2 s by the receiver: the third event's claim waits 1.2 s for a permit,
    // and its lease (2 s) would end in the middle of its request; the poller looks every 20 ms.
    ({ env, app, receiver } = await dispatcherWithReceiver({
      WEBHOOK_POLL_MS: '20',
      WEBHOOK_CONCURRENCY: '2',
      WEBHOOK_LEASE_MS: '2000',
      WEBHOOK_TIMEOUT_MS: '1500',
      // The three events' jobs at once, so all three are claimed together.
      WEBHOOK_JOB_CONCURRENCY: '4',
    }));
    const put = await rpc(app, WEBHOOK_RPC.PUT_ENDPOINT, { ...scope, body: { url: receiver.url('/held') } });
    expect(put.ok).toBe(true);
  });

  afterAll(async () => {
    await app?.close();
    await env?.teardown();
    await receiver?.stop();
  });

  it('is given back unsent instead of being POSTed beside its takeover', async () => {
    receiver.on('/held', { status: 200, delayMs: 1200 });
    const events = [event(scope), event(scope), event(scope)];
    await Promise.all(events.map((e) => enqueue(app, e)));
    const db = app.get(DataSource);
    await waitFor(
      async () =>
        (
          await db.query(
            `SELECT count(*)::int AS n FROM webhook_deliveries WHERE tenant_id = $1 AND status = 'delivered'`,
            [scope.tenantId],
          )
        )[0].n,
      (n) => n === 3,
      20_000,
    );
    expect(receiver.maxInFlightOfOneId).toBe(1);
    const ids = receiver.at('/held').map((r) => r.headers['webhook-id']);
    expect(new Set(ids).size).toBe(3);
  });
});
