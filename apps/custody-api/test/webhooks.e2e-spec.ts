import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { verifyWebhookBody } from '@tessera/auth';
import {
  type DispatcherProcess,
  makeCertificate,
  startDispatcherProcess,
  SETUP_HOOK_TIMEOUT_MS,
} from '@tessera/testing';
import {
  ASSETS,
  BASIC_SCOPES,
  client,
  createKey,
  createTenant,
  type Harness,
  startHarness,
  waitFor,
} from './support';

let h: Harness;
let dispatcher: DispatcherProcess;

beforeAll(async () => {
  h = await startHarness({}, { worker: false });
  dispatcher = await startDispatcherProcess(h.env.env);
}, SETUP_HOOK_TIMEOUT_MS);

afterAll(async () => {
  await dispatcher?.stop();
  await h?.close();
});

describe('custody webhook endpoints, served by the real dispatcher over RPC', () => {
  it('PUT /webhooks/outbound shows the secret once, GET never; scopes are enforced', async () => {
    const tenant = await createTenant(h.api);
    const api = client(
      h.api,
      await createKey(h.api, tenant, { scopes: [...BASIC_SCOPES, 'webhooks:read', 'webhooks:write'] }),
    );

    const first = await api.put('/webhooks/outbound', { url: 'https://127.0.0.1:9/hooks' }).expect(200);
    expect(first.body).toMatchObject({
      url: 'https://127.0.0.1:9/hooks',
      isConfigured: true,
      subscribedEventTypes: null,
    });
    expect(first.body.signingSecret).toMatch(/^whsec_/);

    const again = await api.put('/webhooks/outbound', { url: 'https://127.0.0.1:9/hooks' }).expect(200);
    expect(again.body.signingSecret).toBeNull();
    const read = await api.get('/webhooks/outbound').expect(200);
    expect(read.body).toMatchObject({
      url: 'https://127.0.0.1:9/hooks',
      signingSecret: null,
      isConfigured: true,
    });

    const catalog = await api.get('/webhooks/events/catalog').expect(200);
    expect(JSON.stringify(catalog.body)).toContain('transaction.status.updated');

    await api.get('/webhooks/deliveries?pageSize=201').expect(400);

    const readOnly = client(h.api, await createKey(h.api, tenant, { scopes: ['webhooks:read'] }));
    await readOnly.get('/webhooks/outbound').expect(200);
    const denied = await readOnly.put('/webhooks/outbound', { url: 'https://127.0.0.1:9/other' }).expect(403);
    expect(denied.body).toEqual({ message: 'This API key lacks the scope webhooks:write' });
  });

  it('refuses a URL the parser would read as another (spaces, controls, backslashes, no slashes) and port 0', async () => {
    const tenant = await createTenant(h.api);
    const api = client(
      h.api,
      await createKey(h.api, tenant, { scopes: ['webhooks:read', 'webhooks:write'] }),
    );
    const cases: [string, string][] = [
      [' https://127.0.0.1:9/h', 'URL must not contain spaces or control characters'],
      ['https://127.0.0.1:9/h\t', 'URL must not contain spaces or control characters'],
      ['https://127.0.0.1:9/a\nb', 'URL must not contain spaces or control characters'],
      ['https://127.0.0.1:9/a b', 'URL must not contain spaces or control characters'],
      ['https:\\\\127.0.0.1:9/h', 'URL must not contain backslashes'],
      ['https:127.0.0.1:9/h', 'URL must start with https://'],
      ['https://127.0.0.1:0/h', 'URL port must be 1 to 65535'],
    ];
    for (const [url, reason] of cases) {
      const res = await api.put('/webhooks/outbound', { url });
      expect({ url, status: res.status, body: res.body }).toEqual({
        url,
        status: 400,
        body: { message: 'Invalid webhook URL', errors: { url: [reason] } },
      });
    }
    expect((await api.get('/webhooks/outbound').expect(200)).body.url).toBeNull();
    // Upper-case scheme, IDN hosts and other ports are still taken as before.
    const ok = await api.put('/webhooks/outbound', { url: 'HTTPS://127.0.0.1:65535/h' }).expect(200);
    expect(ok.body.url).toBe('HTTPS://127.0.0.1:65535/h');
  });

  it('refuses a non-https URL with a 400 in the custody shape', async () => {
    const tenant = await createTenant(h.api);
    const api = client(h.api, await createKey(h.api, tenant, { scopes: ['webhooks:write'] }));
    const res = await api.put('/webhooks/outbound', { url: 'http://127.0.0.1:9/hooks' }).expect(400);
    expect(typeof res.body.message).toBe('string');
  });
});

/**
 * End to end, as a partner sees it: a sandbox deposit through custody's API, its events relayed by the
 * worker's outbox relay, delivered by the real dispatcher to an HTTPS receiver, signed with the endpoint's
 * secret.
 */
describe('custody events reach a partner receiver', () => {
  let full: Harness;
  let fullDispatcher: DispatcherProcess;
  let receiver: Server;
  const received: { headers: Record<string, unknown>; rawBody: string }[] = [];

  beforeAll(async () => {
    const certificate = makeCertificate();
    receiver = createServer({ key: certificate.key, cert: certificate.cert }, (req, res) => {
      let rawBody = '';
      req.setEncoding('utf8');
      req.on('data', (chunk: string) => (rawBody += chunk));
      req.on('end', () => {
        received.push({ headers: req.headers, rawBody });
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    full = await startHarness({});
    fullDispatcher = await startDispatcherProcess({ ...full.env.env, WEBHOOK_CA_FILE: certificate.certFile });
  }, SETUP_HOOK_TIMEOUT_MS);

  afterAll(async () => {
    await fullDispatcher?.stop();
    await full?.close();
    receiver?.closeAllConnections();
    receiver?.close();
  });

  it('a deposit arrives as transaction.created, its status updates up to Completed, and balance.updated', async () => {
    const tenant = await createTenant(full.api);
    const api = client(
      full.api,
      await createKey(full.api, tenant, { scopes: [...BASIC_SCOPES, 'webhooks:write', 'sandbox:write'] }),
    );
    const url = `https://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;
    const { signingSecret } = (await api.put('/webhooks/outbound', { url }).expect(200)).body;
    const vault = (await api.post('/vaults', { externalId: 'e2e-hooks', name: 'E2E' }).expect(201)).body;
    const wallet = (await api.post(`/vaults/${vault.id}/wallets`, { assetId: ASSETS.BTC }).expect(201)).body;
    const deposit = (
      await api.post('/sandbox/deposits', { walletId: wallet.walletId, amount: '0.25' }).expect(201)
    ).body;

    const events = () =>
      received
        .filter((r) => verifyWebhookBody(signingSecret, r.rawBody, String(r.headers['x-webhook-signature'])))
        .map(
          (r) =>
            JSON.parse(r.rawBody) as { eventType: string; entityId: string; data: Record<string, unknown> },
        );
    // Deliveries arrive at least once and in any order (docs/webhooks.md, "Ordering"): the deposit's Completed
    // update can arrive before its transaction.created, the wallet's wallet.created or the balance's
    // balance.updated, so wait for all of them.
    type Event = ReturnType<typeof events>[number];
    const created = (e: Event) =>
      e.eventType === 'transaction.created' && e.entityId === deposit.transactionId;
    const completed = (e: Event) =>
      e.eventType === 'transaction.status.updated' &&
      e.entityId === deposit.transactionId &&
      e.data.status === 'Completed';
    const walletCreated = (e: Event) => e.eventType === 'wallet.created' && e.entityId === wallet.walletId;
    const balanceUpdated = (e: Event) =>
      e.eventType === 'balance.updated' && e.entityId === `${vault.id}:${ASSETS.BTC}`;
    const all = await waitFor(
      async () => events(),
      (list) => [created, completed, walletCreated, balanceUpdated].every((wanted) => list.some(wanted)),
      30_000,
    );
    const mine = all.filter((e) => e.entityId === deposit.transactionId);
    expect(mine.find((e) => e.eventType === 'transaction.created')?.data).toMatchObject({
      transactionId: deposit.transactionId,
      type: 'Deposit',
      amount: '0.25',
    });
    const statuses = mine
      .filter((e) => e.eventType === 'transaction.status.updated')
      .map((e) => e.data.status);
    expect(statuses).toContain('Completed');
    expect(all.some(walletCreated)).toBe(true);
    expect(all.some(balanceUpdated)).toBe(true);
    // Every request the receiver got for this tenant was signed with its secret.
    expect(received.length).toBeGreaterThan(0);
    expect(events()).toHaveLength(received.length);
  }, 60_000);
});
