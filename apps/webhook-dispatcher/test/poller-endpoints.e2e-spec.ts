import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { SecretBox } from '@tessera/auth';
import type { TestEnvironment } from '@tessera/testing';
import { DataSource } from 'typeorm';
import { dispatcherWithReceiver, insertDue, putEndpoint } from './support/harness';
import { type HttpsReceiver, waitFor } from './support/https-receiver';

/** The poller reads each endpoint of a claim once and opens its signing secret once (decision 0455). */
let env: TestEnvironment;
let app: NestFastifyApplication;
let receiver: HttpsReceiver;
let db: DataSource;

beforeAll(async () => {
  ({ env, app, receiver } = await dispatcherWithReceiver({
    WEBHOOK_POLL_MS: '20',
    WEBHOOK_CONCURRENCY: '20',
    WEBHOOK_ENDPOINT_CONCURRENCY: '20',
  }));
  db = app.get(DataSource);
}, 60_000);

afterAll(async () => {
  jest.restoreAllMocks();
  await app?.close();
  await env?.teardown();
  await receiver?.stop();
});

const endpoint = (tenantId: string) => putEndpoint(app, receiver, tenantId);

it('opens each endpoint secret once per claim, not once per delivery', async () => {
  const a = await endpoint('tenant-a');
  const b = await endpoint('tenant-b');
  // Counts the real decryption (it still runs); no secret is looked at or logged here.
  const opened = jest.spyOn(SecretBox.prototype, 'openText');
  // Both endpoints' deliveries in one statement, so one claim takes all fifteen.
  await db.transaction(async (m) => {
    await insertDue(m, a, 10);
    await insertDue(m, b, 5);
  });
  await waitFor(
    async () =>
      (await db.query(`SELECT count(*)::int AS n FROM webhook_deliveries WHERE status = 'delivered'`))[0].n,
    (n) => n === 15,
  );
  expect(receiver.at('/tenant-a')).toHaveLength(10);
  expect(receiver.at('/tenant-b')).toHaveLength(5);
  expect(opened).toHaveBeenCalledTimes(2);
});
