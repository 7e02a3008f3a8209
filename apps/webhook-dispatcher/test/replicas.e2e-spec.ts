import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { WEBHOOK_RPC } from '@tessera/contracts';
import type { TestEnvironment } from '@tessera/testing';
import { Webhook } from 'standardwebhooks';
import { DeliveriesService } from '../src/modules/deliveries/deliveries.service';
import { EndpointsService } from '../src/modules/endpoints/endpoints.service';
import { dispatcherWithReceiver, rpc } from './support/harness';
import { type HttpsReceiver, waitFor } from './support/https-receiver';

/**
 * Two dispatcher replicas on one Redis and one database, as deployed (deploy/k8s: replicas 2). Nest's Redis
 * transport hands every request to every replica; each partner call must still run exactly once.
 */
let env: TestEnvironment;
let one: NestFastifyApplication;
let two: NestFastifyApplication;
let receiver: HttpsReceiver;

const scope = { tenantId: 'tenant-replicas', source: 'custody' };
type Config = { url: string; signingSecret: string | null };

beforeAll(async () => {
  let replica: () => Promise<NestFastifyApplication>;
  ({ env, app: one, receiver, replica } = await dispatcherWithReceiver({ WEBHOOK_POLL_MS: '20' }));
  two = await replica();
}, 60_000);

afterAll(async () => {
  await two?.close();
  await one?.close();
  await env?.teardown();
  await receiver?.stop();
});

const put = async (path: string): Promise<Config> => {
  const reply = await rpc(one, WEBHOOK_RPC.PUT_ENDPOINT, { ...scope, body: { url: receiver.url(path) } });
  expect(reply.ok).toBe(true);
  return (reply as { result: Config }).result;
};

/** Sends webhook.test and answers the one request the receiver got for it, verified with `secret`. */
async function testDelivery(path: string, secret: string) {
  const before = receiver.at(path).length;
  const reply = await rpc(two, WEBHOOK_RPC.SEND_TEST, scope);
  expect(reply).toMatchObject({ ok: true, result: { status: 'delivered' } });
  // A second replica's copy would land within milliseconds: give it time to show up.
  await new Promise((r) => setTimeout(r, 500));
  const received = receiver.at(path).slice(before);
  expect(received).toHaveLength(1);
  return new Webhook(secret).verify(received[0]!.rawBody, received[0]!.headers as Record<string, string>);
}

it('a PUT runs once: the secret it returns is the one that signs, and a repeat answers null', async () => {
  for (let round = 0; round < 5; round += 1) {
    const path = `/replicas-${round}`;
    const first = await put(path);
    expect(first.signingSecret).toMatch(/^whsec_/);
    expect((await put(path)).signingSecret).toBeNull();
    expect(await testDelivery(path, first.signingSecret!)).toMatchObject({ eventType: 'webhook.test' });
  }
});

it('concurrent PUTs of different URLs: each secret returned was stored by its own PUT; the winner signs', async () => {
  const paths = ['/race-a', '/race-b', '/race-c', '/race-d'];
  const configs = await Promise.all(paths.map((path) => put(path)));
  for (const config of configs) expect(config.signingSecret).toMatch(/^whsec_/);
  await rpc(one, WEBHOOK_RPC.SEND_TEST, scope);
  const [path] = await waitFor(
    async () => paths.filter((p) => receiver.at(p).length > 0),
    (hit) => hit.length === 1,
  );
  const winner = configs[paths.indexOf(path!)]!;
  const [req] = receiver.at(path!);
  expect(() =>
    new Webhook(winner.signingSecret!).verify(req!.rawBody, req!.headers as Record<string, string>),
  ).not.toThrow();
});

it('a test delivery right after a rotation on another replica goes to the new URL, signed with the new secret', async () => {
  const tenant = { tenantId: 'tenant-replicas-cache', source: 'custody' as const };
  const endpoints = one.get(EndpointsService);
  const tests = two.get(DeliveriesService);
  const first = await endpoints.put(tenant.tenantId, tenant.source, { url: receiver.url('/cache-old') });
  // The second replica sends a test delivery, and so looks the endpoint up.
  expect(await tests.sendTest(tenant.tenantId, tenant.source)).toMatchObject({ status: 'delivered' });
  expect(receiver.at('/cache-old')).toHaveLength(1);
  expect(first.signingSecret).toMatch(/^whsec_/);
  // The first replica rotates; the partner asks the second one for a test delivery at once.
  const second = await endpoints.put(tenant.tenantId, tenant.source, { url: receiver.url('/cache-new') });
  expect(await tests.sendTest(tenant.tenantId, tenant.source)).toMatchObject({ status: 'delivered' });
  expect(receiver.at('/cache-old')).toHaveLength(1);
  const [req] = receiver.at('/cache-new');
  expect(req).toBeDefined();
  expect(() =>
    new Webhook(second.signingSecret!).verify(req!.rawBody, req!.headers as Record<string, string>),
  ).not.toThrow();
});
