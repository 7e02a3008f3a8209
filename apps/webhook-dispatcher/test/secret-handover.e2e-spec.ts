import { createHmac, randomUUID } from 'node:crypto';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { WEBHOOK_RPC } from '@tessera/contracts';
import type { TestEnvironment } from '@tessera/testing';
import { dispatcherWithReceiver, rpc } from './support/harness';
import type { HttpsReceiver } from './support/https-receiver';

/**
 * Decision 0448: a secret stored by a PUT is handed over when the API acknowledges the reply that carried it.
 * Until then a repeat PUT with the same URL rotates it again, because that reply may never have arrived.
 */
let env: TestEnvironment;
let app: NestFastifyApplication;
let receiver: HttpsReceiver;

beforeAll(async () => {
  ({ env, app, receiver } = await dispatcherWithReceiver({}));
});

afterAll(async () => {
  await app?.close();
  await env?.teardown();
  await receiver?.stop();
});

type Config = { signingSecret: string | null };

async function put(tenantId: string, path: string, putId?: string): Promise<string | null> {
  const reply = await rpc(app, WEBHOOK_RPC.PUT_ENDPOINT, {
    tenantId,
    source: 'custody',
    body: { url: receiver.url(path) },
    ...(putId ? { putId } : {}),
  });
  expect(reply.ok).toBe(true);
  return (reply as { result: Config }).result.signingSecret;
}

async function ack(tenantId: string, putId: string): Promise<boolean> {
  const reply = await rpc(app, WEBHOOK_RPC.ACK_SECRET, { tenantId, source: 'custody', putId });
  expect(reply.ok).toBe(true);
  return (reply as { result: { acknowledged: boolean } }).result.acknowledged;
}

it('an unacknowledged secret is rotated by a repeat PUT; an acknowledged one is kept', async () => {
  const tenant = 'tenant-handover';
  const [p1, p2, p3] = [randomUUID(), randomUUID(), randomUUID()];
  const first = await put(tenant, '/handover', p1);
  expect(first).toMatch(/^whsec_/);
  // p1's reply never reached the partner (no acknowledgement): the repeat generates and returns a new secret.
  const second = await put(tenant, '/handover', p2);
  expect(second).toMatch(/^whsec_/);
  expect(second).not.toBe(first);
  // p1's late acknowledgement finds its secret replaced; p2's is taken, and taken again (idempotent).
  expect(await ack(tenant, p1)).toBe(false);
  expect(await ack(tenant, p2)).toBe(true);
  expect(await ack(tenant, p2)).toBe(true);
  // Handed over: the contract's repeat answers null and keeps it.
  expect(await put(tenant, '/handover', p3)).toBeNull();
  expect(await ack(tenant, p3)).toBe(false);
  const sent = await rpc(app, WEBHOOK_RPC.SEND_TEST, { tenantId: tenant, source: 'custody' });
  expect(sent).toMatchObject({ ok: true, result: { status: 'delivered' } });
  const [req] = receiver.at('/handover');
  expect(req!.headers['x-webhook-signature']).toBe(
    createHmac('sha256', second!).update(req!.rawBody).digest('hex'),
  );
});

it('a caller without a putId (an API from before 0448) keeps the old rules: a repeat answers null', async () => {
  const tenant = 'tenant-handover-legacy';
  expect(await put(tenant, '/legacy')).toMatch(/^whsec_/);
  expect(await put(tenant, '/legacy')).toBeNull();
});

it('a malformed acknowledgement is a 400 reply, not a crash', async () => {
  const reply = await rpc(app, WEBHOOK_RPC.ACK_SECRET, { tenantId: 't', source: 'custody', putId: 'nope' });
  expect(reply).toMatchObject({ ok: false, error: { status: 400 } });
});
