import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { WEBHOOK_RPC } from '@tessera/contracts';
import type { TestEnvironment } from '@tessera/testing';
import { DataSource } from 'typeorm';
import { DeliveriesRepository } from '../src/modules/deliveries/deliveries.repository';
import { dispatcherWithReceiver, enqueue, event, rpc } from './support/harness';
import { type HttpsReceiver, waitFor } from './support/https-receiver';

/**
 * A partner's retry that lands while the dispatcher is attempting the same delivery. The poller is slowed to
 * ten minutes so that the test, not a timer, decides the order: claim, re-queue, then the attempt's outcome.
 */
let env: TestEnvironment;
let app: NestFastifyApplication;
let receiver: HttpsReceiver;
let db: DataSource;

const scope = { tenantId: 'tenant-in-flight', source: 'custody' as const };

beforeAll(async () => {
  ({ env, app, receiver } = await dispatcherWithReceiver({ WEBHOOK_POLL_MS: '600000' }));
  db = app.get(DataSource);
  const put = await rpc(app, WEBHOOK_RPC.PUT_ENDPOINT, {
    ...scope,
    body: { url: receiver.url('/in-flight') },
  });
  expect(put.ok).toBe(true);
});

afterAll(async () => {
  await app?.close();
  await env?.teardown();
  await receiver?.stop();
});

it("a failed last attempt of a cycle does not write 'dead' over a re-queue made while it was in flight", async () => {
  const e = event(scope);
  await enqueue(app, e);
  const [row] = await waitFor(
    () => db.query('SELECT id FROM webhook_deliveries WHERE event_id = $1', [e.eventId]),
    (rows: unknown[]) => rows.length === 1,
  );
  const id = (row as { id: string }).id;
  await waitFor(
    async () => (await db.query('SELECT status FROM webhook_deliveries WHERE id = $1', [id]))[0].status,
    (status) => status === 'delivered',
  );
  // As if four attempts had failed and the fifth, the cycle's last, were due now.
  await db.query(
    `UPDATE webhook_deliveries SET status = 'failed', attempt_count = 4, attempt_base = 0, next_attempt_at = now(),
            delivered_at = NULL WHERE id = $1`,
    [id],
  );
  const repository = app.get(DeliveriesRepository);
  const [claimed] = await repository.claimDue(10, 30_000, 10, new Map());
  expect(claimed).toMatchObject({ id, attemptCount: 4, attemptBase: 0 });

  // The partner retries while that attempt is in flight: a fresh cycle, due now.
  const retried = await rpc(app, WEBHOOK_RPC.RETRY_DELIVERY, { ...scope, id });
  expect(retried).toMatchObject({ ok: true, result: { id, status: 'pending' } });

  // The attempt then fails. It is recorded, but the re-queue's state stands.
  const written = await repository.recordAttempt(
    claimed!,
    {
      requestUrl: receiver.url('/in-flight'),
      httpStatusCode: 500,
      responseBody: 'down',
      errorMessage: null,
      durationMs: 5,
      attemptedAt: new Date(),
      success: false,
    },
    { status: 'dead', nextAttemptAt: null, lastError: 'HTTP 500' },
  );
  expect(written).toBe(true);
  const [after] = await db.query(
    'SELECT status, attempt_count AS "attemptCount", attempt_base AS "attemptBase" FROM webhook_deliveries WHERE id = $1',
    [id],
  );
  expect(after).toEqual({ status: 'pending', attemptCount: 5, attemptBase: 4 });
  const attempts = await db.query('SELECT attempt_number FROM webhook_attempts WHERE delivery_id = $1', [id]);
  expect(attempts.map((a: { attempt_number: number }) => a.attempt_number)).toContain(5);
});
