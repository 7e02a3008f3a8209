import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { WEBHOOK_RPC } from '@tessera/contracts';
import type { TestEnvironment } from '@tessera/testing';
import { dispatcherWithReceiver, enqueue, event, rpc } from './support/harness';
import { type HttpsReceiver, waitFor } from './support/https-receiver';

/**
 * The partner's test delivery waits for its endpoint's request permit as a first attempt does, at most
 * WEBHOOK_ENDPOINT_WAIT_MS (decision 0495). It waited without a bound, then had the attempt's whole deadline:
 * behind busy attempts to the same endpoint it outlasted the API's 10 s RPC wait (502, the delivery recorded).
 * One permit per endpoint here; the receiver holds each request 2 s.
 */

const SLOW_MS = 2000;

let env: TestEnvironment;
let app: NestFastifyApplication;
let receiver: HttpsReceiver;

beforeAll(async () => {
  ({ env, app, receiver } = await dispatcherWithReceiver({
    WEBHOOK_POLL_MS: '50',
    WEBHOOK_TIMEOUT_MS: '3000',
    WEBHOOK_CONCURRENCY: '2',
    WEBHOOK_ENDPOINT_CONCURRENCY: '1',
    WEBHOOK_ENDPOINT_WAIT_MS: '300',
  }));
});

afterAll(async () => {
  await app?.close();
  await env?.teardown();
  await receiver?.stop();
});

it('a test delivery to a busy endpoint answers pending after the permit wait, and the poller sends it', async () => {
  const tenantId = 'tenant-busy';
  receiver.on('/busy', { status: 200, delayMs: SLOW_MS });
  const put = await rpc(app, WEBHOOK_RPC.PUT_ENDPOINT, {
    tenantId,
    source: 'custody',
    body: { url: receiver.url('/busy') },
  });
  expect(put.ok).toBe(true);
  await enqueue(app, event({ tenantId }));
  // The event's request holds the endpoint's one permit.
  await waitFor(
    async () => receiver.at('/busy').length,
    (n) => n === 1,
  );
  const test = (await rpc(app, WEBHOOK_RPC.SEND_TEST, { tenantId, source: 'custody' })) as {
    ok: boolean;
    result: { deliveryId: string; status: string };
  };
  // Not sent beside the busy request, and not delivered after waiting for it (it was 'delivered', ~4 s later).
  expect(test).toMatchObject({ ok: true, result: { status: 'pending' } });
  const sentTest = await waitFor(
    async () => receiver.at('/busy').find((r) => r.rawBody.includes('"webhook.test"')),
    (r) => Boolean(r),
  );
  expect(sentTest).toBeDefined();
});
