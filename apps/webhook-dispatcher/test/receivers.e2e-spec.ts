import { createHmac } from 'node:crypto';
import { Logger } from '@nestjs/common';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { WEBHOOK_RPC } from '@tessera/contracts';
import { bootApp, type TestEnvironment } from '@tessera/testing';
import { DataSource } from 'typeorm';
import { AppModule } from '../src/app.module';
import { loadEnv } from '../src/config/env';
import { dispatcherWithReceiver, enqueue, event, insertDue, putEndpoint, rpc } from './support/harness';
import { type HttpsReceiver, makeCertificate, waitFor } from './support/https-receiver';
import { testResolver } from './support/resolver';

/**
 * Receiver behaviours and delivery states of the custody contract ("Events", the delivery state table, the URL
 * rules) that the other suites do not reach (decision 0490): the signature over non-ASCII bytes, a reset
 * connection, a huge answer, each redirect status, a retry whose host turned private, a retry of a pending
 * delivery.
 */

let env: TestEnvironment;
let app: NestFastifyApplication;
let receiver: HttpsReceiver;
let db: DataSource;

beforeAll(async () => {
  ({ env, app, receiver } = await dispatcherWithReceiver(
    { WEBHOOK_POLL_MS: '20', WEBHOOK_TIMEOUT_MS: '400' },
    // flaky.test: the PUT's check and the first attempt see the receiver, the retry a private address.
    testResolver({ 'flaky.test': [['127.0.0.1'], ['127.0.0.1'], ['10.0.0.7']] }),
  ));
  db = app.get(DataSource);
});

afterAll(async () => {
  await app?.close();
  await env?.teardown();
  await receiver?.stop();
});

type Attempt = {
  attemptNumber: number;
  httpStatusCode: number | null;
  responseBody: string | null;
  errorMessage: string | null;
  durationMs: number;
  success: boolean;
};
type Detail = { status: string; attemptCount: number; lastError: string | null; attempts: Attempt[] };

async function deliveryOf(eventId: string): Promise<string> {
  const row = await waitFor(
    async () =>
      (await db.query('SELECT id FROM webhook_deliveries WHERE event_id = $1', [eventId]))[0] as
        { id: string } | undefined,
    (r) => Boolean(r),
  );
  return row!.id;
}

async function waitStatus(tenantId: string, id: string, status: string): Promise<Detail> {
  return waitFor(
    async () =>
      ((await rpc(app, WEBHOOK_RPC.GET_DELIVERY, { tenantId, source: 'custody', id })) as { result: Detail })
        .result,
    (d) => d.status === status,
  );
}

it('signs the raw UTF-8 bytes of the body: lowercase hex HMAC-SHA256, non-ASCII data included', async () => {
  const tenantId = 'tenant-utf8';
  const secret = (
    (await rpc(app, WEBHOOK_RPC.PUT_ENDPOINT, {
      tenantId,
      source: 'custody',
      body: { url: receiver.url('/utf8') },
    })) as { result: { signingSecret: string } }
  ).result.signingSecret;
  const e = event({ tenantId, data: { walletId: 'w', label: 'Zoë – 東京 🚀 "quoted" \\ back' } });
  await enqueue(app, e);
  const [req] = await waitFor(
    () => receiver.at('/utf8'),
    (r) => r.length === 1,
  );
  const bytes = Buffer.from(req!.rawBody, 'utf8');
  expect(Number(req!.headers['content-length'])).toBe(bytes.length);
  expect(bytes.length).toBeGreaterThan(req!.rawBody.length);
  const signature = String(req!.headers['x-webhook-signature']);
  expect(signature).toMatch(/^[0-9a-f]{64}$/);
  expect(signature).toBe(createHmac('sha256', Buffer.from(secret, 'utf8')).update(bytes).digest('hex'));
  expect(JSON.parse(req!.rawBody).data.label).toBe('Zoë – 東京 🚀 "quoted" \\ back');
});

it('counts a connection reset as a failed attempt without a status, and retries it', async () => {
  const tenantId = 'tenant-reset';
  await putEndpoint(app, receiver, tenantId, '/reset');
  receiver.on('/reset', { status: 200, reset: true }, { status: 200 });
  const e = event({ tenantId });
  await enqueue(app, e);
  const d = await waitStatus(tenantId, await deliveryOf(e.eventId), 'delivered');
  expect(d.attempts[0]).toMatchObject({
    attemptNumber: 1,
    success: false,
    httpStatusCode: null,
    responseBody: null,
    errorMessage: expect.stringMatching(/^UND_ERR_SOCKET/),
  });
  expect(d.attempts.at(-1)).toMatchObject({ success: true, httpStatusCode: 200 });
});

it('takes a huge 2xx answer as delivered, keeping only WEBHOOK_RESPONSE_BODY_LIMIT bytes of it', async () => {
  const tenantId = 'tenant-huge';
  await putEndpoint(app, receiver, tenantId, '/huge');
  receiver.on('/huge', { status: 200, body: 'y'.repeat(1024 * 1024) });
  const e = event({ tenantId });
  await enqueue(app, e);
  const d = await waitStatus(tenantId, await deliveryOf(e.eventId), 'delivered');
  // 512 times what is kept. A loaded machine may take longer than the suite's 400 ms to serve it: such attempts
  // time out and are retried.
  for (const earlier of d.attempts.slice(0, -1)) expect(earlier.errorMessage).toBe('timed out after 400 ms');
  expect(d.attempts.at(-1)).toMatchObject({ success: true, httpStatusCode: 200, errorMessage: null });
  expect(d.attempts.at(-1)!.responseBody).toBe('y'.repeat(2048));
});

it.each([301, 303, 307, 308])('counts a %i as a failed attempt and never follows it', async (status) => {
  const tenantId = `tenant-${status}`;
  await putEndpoint(app, receiver, tenantId, `/moved-${status}`);
  receiver.on(
    `/moved-${status}`,
    { status, headers: { location: receiver.url(`/target-${status}`) } },
    { status: 200 },
  );
  const e = event({ tenantId });
  await enqueue(app, e);
  const d = await waitStatus(tenantId, await deliveryOf(e.eventId), 'delivered');
  expect(d.attempts[0]).toMatchObject({
    success: false,
    httpStatusCode: status,
    errorMessage: `HTTP ${status} (redirects are not followed)`,
  });
  expect(receiver.at(`/target-${status}`)).toHaveLength(0);
});

it('dead-letters a failed delivery whose host resolves to a private address on its retry', async () => {
  const tenantId = 'tenant-turned';
  const put = await rpc(app, WEBHOOK_RPC.PUT_ENDPOINT, {
    tenantId,
    source: 'custody',
    body: { url: `https://flaky.test:${receiver.port}/turned` },
  });
  expect(put.ok).toBe(true);
  receiver.on('/turned', { status: 503 });
  const e = event({ tenantId });
  await enqueue(app, e);
  const d = await waitStatus(tenantId, await deliveryOf(e.eventId), 'dead');
  expect(d.attemptCount).toBe(2);
  expect(d.attempts.map((a) => [a.httpStatusCode, a.errorMessage])).toEqual([
    [503, 'HTTP 503'],
    [null, 'target refused: address 10.0.0.7 is not public (private)'],
  ]);
  expect(receiver.at('/turned')).toHaveLength(1);
});

it('refuses the retry of a pending delivery with 409, and leaves it as it was', async () => {
  const tenantId = 'tenant-pending';
  const endpoint = await putEndpoint(app, receiver, tenantId, '/pending');
  // Due in an hour from its insert on (a negative `agoMs`): the poller leaves it pending. Inserted due now and
  // pushed back after, it could be claimed and delivered in between on a loaded machine.
  const [eventId] = await insertDue(db, endpoint, 1, -3_600_000);
  const id = await deliveryOf(eventId!);
  expect(await rpc(app, WEBHOOK_RPC.RETRY_DELIVERY, { tenantId, source: 'custody', id })).toEqual({
    ok: false,
    error: { status: 409, message: 'Only failed or dead deliveries can be retried; this one is pending' },
  });
  const d = (await rpc(app, WEBHOOK_RPC.GET_DELIVERY, { tenantId, source: 'custody', id })) as {
    result: Detail;
  };
  expect(d.result).toMatchObject({ status: 'pending', attemptCount: 0 });
  expect(receiver.at('/pending')).toHaveLength(0);
});

it('warns at boot when WEBHOOK_ALLOW_PRIVATE_TARGETS or WEBHOOK_CA_FILE is set, and only then', async () => {
  // The warnings are written while the providers are made, before pino takes over Nest's logger (Nest's own
  // console logger, error and warn only, prints them): the Logger calls are what is checked.
  const boot = async (vars: Record<string, string>) => {
    const warn = jest.spyOn(Logger.prototype, 'warn');
    try {
      const booted = await bootApp(AppModule.forRoot(loadEnv({ ...env.env, ...vars })));
      await booted.close();
      return warn.mock.calls.map(([message]) => String(message)).filter((m) => /^WEBHOOK_/.test(m));
    } finally {
      warn.mockRestore();
    }
  };
  expect(
    await boot({
      WEBHOOK_ALLOW_PRIVATE_TARGETS: '127.0.0.1/32',
      WEBHOOK_CA_FILE: makeCertificate().certFile,
    }),
  ).toEqual([
    expect.stringMatching(
      /^WEBHOOK_ALLOW_PRIVATE_TARGETS is set \(127\.0\.0\.1\/32\).*Development and tests only\.$/,
    ),
    expect.stringMatching(/^WEBHOOK_CA_FILE is set .*Development and tests only\.$/),
  ]);
  expect(await boot({})).toEqual([]);
});
