import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { WEBHOOK_RPC } from '@tessera/contracts';
import type { TestEnvironment } from '@tessera/testing';
import { DataSource } from 'typeorm';
import { dispatcherWithReceiver, enqueue, event, putEndpoint, rpc } from './support/harness';
import { type HttpsReceiver, waitFor } from './support/https-receiver';

/**
 * The retry schedule at its real length (WEBHOOK_TIME_SCALE 1, the defaults): the contract's "about 10 s, 30 s,
 * 60 s, 5 min" with DECISIONS' ±10 % jitter, read from each failed attempt's next attempt time rather than
 * waited for (decision 0490). Each retry is made due at once by the test; the delay it sets is the dispatcher's.
 */

let env: TestEnvironment;
let app: NestFastifyApplication;
let receiver: HttpsReceiver;
let db: DataSource;

beforeAll(async () => {
  ({ env, app, receiver } = await dispatcherWithReceiver({ WEBHOOK_POLL_MS: '20', WEBHOOK_TIME_SCALE: '1' }));
  db = app.get(DataSource);
});

afterAll(async () => {
  await app?.close();
  await env?.teardown();
  await receiver?.stop();
});

type Detail = {
  status: string;
  attemptCount: number;
  lastAttemptAt: string | null;
  nextAttemptAt: string | null;
};

it('waits about 10 s, 30 s, 60 s and 5 min (±10 %) after attempts 1 to 4, and is dead after the 5th', async () => {
  const tenantId = 'tenant-schedule';
  await putEndpoint(app, receiver, tenantId, '/down');
  receiver.on('/down', { status: 500 });
  const e = event({ tenantId });
  await enqueue(app, e);
  const { id } = await waitFor(
    async () =>
      (await db.query('SELECT id FROM webhook_deliveries WHERE event_id = $1', [e.eventId]))[0] as
        { id: string } | undefined,
    (r) => Boolean(r),
  ).then((r) => r!);
  const detail = async () =>
    ((await rpc(app, WEBHOOK_RPC.GET_DELIVERY, { tenantId, source: 'custody', id })) as { result: Detail })
      .result;

  const gaps: number[] = [];
  for (let attempt = 1; attempt <= 4; attempt++) {
    const failed = await waitFor(detail, (d) => d.status === 'failed' && d.attemptCount === attempt);
    gaps.push(Date.parse(failed.nextAttemptAt!) - Date.parse(failed.lastAttemptAt!));
    // Due now: the poller makes the next attempt without the test waiting out the delay.
    await db.query('UPDATE webhook_deliveries SET next_attempt_at = now() WHERE id = $1', [id]);
  }
  [10_000, 30_000, 60_000, 300_000].forEach((step, i) => {
    expect(gaps[i]).toBeGreaterThanOrEqual(step * 0.9);
    // The delay counts from the attempt's end, its start is recorded: a little slack for the request.
    expect(gaps[i]).toBeLessThanOrEqual(step * 1.1 + 1000);
  });
  const dead = await waitFor(detail, (d) => d.status === 'dead');
  expect(dead).toMatchObject({ attemptCount: 5, nextAttemptAt: null });
  expect(receiver.at('/down')).toHaveLength(5);
});
