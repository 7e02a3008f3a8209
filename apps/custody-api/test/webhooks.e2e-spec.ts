import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { signRequest, verifyWebhookBody } from '@tessera/auth';
import {
  type DispatcherProcess,
  makeCertificate,
  startDispatcherProcess,
  SETUP_HOOK_TIMEOUT_MS,
} from '@tessera/testing';
import request from 'supertest';
import {
  ASSETS,
  BASIC_SCOPES,
  type Client,
  client,
  createKey,
  createTenant,
  type Harness,
  type KeyPair,
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
 * The webhook contract review (decision 0490): every refusal of the partner webhook endpoints is a 4xx in the custody
 * shape, never a 5xx, and names the field it is about.
 */
describe('webhook endpoints refuse malformed input in the contract shape (decision 0490)', () => {
  let api: Client;
  let signed: KeyPair;

  beforeAll(async () => {
    signed = await createKey(h.api, await createTenant(h.api), {
      scopes: ['webhooks:read', 'webhooks:write'],
    });
    api = client(h.api, signed);
  });

  /** A signed PUT /webhooks/outbound whose body is exactly `body` (the helper client would re-serialise it). */
  function putRaw(body: string) {
    const headers = signRequest(signed.apiKey, signed.apiSecret, {
      method: 'PUT',
      pathWithQuery: '/webhooks/outbound',
      body,
    });
    let req = request(h.api.getHttpServer()).put('/webhooks/outbound');
    for (const [name, value] of Object.entries(headers)) req = req.set(name, value);
    return req.set('content-type', 'application/json').send(body);
  }

  it('PUT /webhooks/outbound: each malformed body is a 400 naming its field, and nothing is stored', async () => {
    const url = 'https://127.0.0.1:9/hooks';
    const cases: [string, string, string][] = [
      ['no url', '{}', 'url'],
      ['url a number', '{"url":123}', 'url'],
      ['url null', '{"url":null}', 'url'],
      ['url an array', `{"url":["${url}"]}`, 'url'],
      ['url empty', '{"url":""}', 'url'],
      ['http scheme', '{"url":"http://127.0.0.1:9/hooks"}', 'url'],
      ['not a URL', '{"url":"hooks"}', 'url'],
      ['no host', '{"url":"https://"}', 'url'],
      ['URL over 2048 characters', JSON.stringify({ url: `${url}/${'a'.repeat(2048)}` }), 'url'],
      ['NUL in the URL', `{"url":"${url}\\u0000"}`, 'body'],
      [
        'unknown event type',
        JSON.stringify({ url, subscribedEventTypes: ['transaction.created', 'nope'] }),
        'subscribedEventTypes',
      ],
      [
        'event type of the other API',
        JSON.stringify({ url, subscribedEventTypes: ['applicantReviewed'] }),
        'subscribedEventTypes',
      ],
      [
        'event type in another case',
        JSON.stringify({ url, subscribedEventTypes: ['Wallet.Created'] }),
        'subscribedEventTypes',
      ],
      ['empty list of types', JSON.stringify({ url, subscribedEventTypes: [] }), 'subscribedEventTypes'],
      [
        'types a string',
        JSON.stringify({ url, subscribedEventTypes: 'wallet.created' }),
        'subscribedEventTypes',
      ],
      ['types an object', JSON.stringify({ url, subscribedEventTypes: {} }), 'subscribedEventTypes'],
      ['a type a number', JSON.stringify({ url, subscribedEventTypes: [1] }), 'subscribedEventTypes.0'],
      ['a type null', JSON.stringify({ url, subscribedEventTypes: [null] }), 'subscribedEventTypes.0'],
      ['a type empty', JSON.stringify({ url, subscribedEventTypes: [''] }), 'subscribedEventTypes.0'],
      [
        'a type over 100 characters',
        JSON.stringify({ url, subscribedEventTypes: [`wallet.${'x'.repeat(100_000)}`] }),
        'subscribedEventTypes.0',
      ],
      [
        'a hundred unknown types of 100 characters',
        JSON.stringify({
          url,
          subscribedEventTypes: Array.from({ length: 100 }, (_, i) => `nope.${i}.`.padEnd(100, 'x')),
        }),
        'subscribedEventTypes',
      ],
      [
        '101 types',
        JSON.stringify({ url, subscribedEventTypes: Array(101).fill('wallet.created') }),
        'subscribedEventTypes',
      ],
      ['body an array', '[]', 'body'],
      ['body a string', '"x"', 'body'],
      ['body a number', '1', 'body'],
    ];
    for (const [name, body, field] of cases) {
      const res = await putRaw(body);
      expect({ name, status: res.status, fields: Object.keys(res.body.errors ?? {}) }).toEqual({
        name,
        status: 400,
        fields: [field],
      });
      expect(res.body.message).toEqual(expect.any(String));
      // A refusal names what is wrong; it never echoes a long input back.
      expect(JSON.stringify(res.body).length).toBeLessThan(1000);
    }
    // Unknown types are named up to five, then counted (decision 0495); they were all echoed back.
    const many = await putRaw(
      JSON.stringify({
        url,
        subscribedEventTypes: ['wallet.created', ...Array.from({ length: 8 }, (_, i) => `nope.${i}`)],
      }),
    );
    expect({ status: many.status, body: many.body }).toEqual({
      status: 400,
      body: {
        message: 'Unknown event types',
        errors: {
          subscribedEventTypes: [
            ...[0, 1, 2, 3, 4].map((i) => `unknown event type: nope.${i}`),
            'and 3 more unknown event types',
          ],
        },
      },
    });
    // Malformed JSON and a body over the limit keep their own answers, in the shape.
    expect((await putRaw('{"url":')).status).toBe(400);
    const huge = await putRaw(JSON.stringify({ url: `${url}/${'a'.repeat(2_000_000)}` }));
    expect(huge.status).toBe(413);
    expect(huge.body).toEqual({ message: expect.any(String) });
    expect((await api.get('/webhooks/outbound').expect(200)).body).toEqual({
      url: null,
      signingSecret: null,
      subscribedEventTypes: null,
      isConfigured: false,
    });
  });

  it('PUT of the same URL with other event types keeps the secret (null) and stores the types once each', async () => {
    const url = 'https://127.0.0.1:9/same';
    const first = await api.put('/webhooks/outbound', { url }).expect(200);
    expect(first.body.signingSecret).toMatch(/^whsec_/);
    const retyped = await api
      .put('/webhooks/outbound', { url, subscribedEventTypes: ['wallet.created', 'wallet.created'] })
      .expect(200);
    expect(retyped.body).toEqual({
      url,
      signingSecret: null,
      subscribedEventTypes: ['wallet.created'],
      isConfigured: true,
    });
    const back = await api.put('/webhooks/outbound', { url, subscribedEventTypes: null }).expect(200);
    expect(back.body).toMatchObject({ signingSecret: null, subscribedEventTypes: null });
  });

  it('GET /webhooks/deliveries: malformed pageSize, cursor and status are 400 naming the field', async () => {
    const cases: [string, string][] = [
      ['pageSize=0', 'pageSize'],
      ['pageSize=-1', 'pageSize'],
      ['pageSize=abc', 'pageSize'],
      ['pageSize=1.5', 'pageSize'],
      ['pageSize=', 'pageSize'],
      ['pageSize=201', 'pageSize'],
      ['pageSize=99999999999999999999999', 'pageSize'],
      ['pageSize=1&pageSize=2', 'pageSize'],
      ['cursor=abc', 'cursor'],
      ['cursor=', 'cursor'],
      ['cursor=00000000-0000-4000-8000-000000000000', 'cursor'],
      // A version 7 id from the far future: its time is past what a timestamp holds (was a bare 400 from the
      // database, without the field).
      ['cursor=ffffffff-ffff-7fff-bfff-ffffffffffff', 'cursor'],
      ['status=bogus', 'status'],
      ['status=DEAD', 'status'],
      ['status=', 'status'],
      ['status=dead&status=failed', 'status'],
    ];
    for (const [query, field] of cases) {
      const res = await api.get(`/webhooks/deliveries?${query}`);
      expect({ query, status: res.status, fields: Object.keys(res.body.errors ?? {}) }).toEqual({
        query,
        status: 400,
        fields: [field],
      });
    }
    // A huge or out-of-range number is one message on pageSize, the page bound (it was two, the other one
    // `must be at most 9007199254740991`; decision 0495).
    for (const [query, message] of [
      ['pageSize=99999999999999999999999', 'must be at most 200'],
      ['pageSize=9007199254740993', 'must be at most 200'],
      ['pageSize=99999999999999999999999.5', 'must be at most 200'],
      ['pageSize=-99999999999999999999999', 'must be at least 1'],
      ['pageSize=1e23', 'pageSize must be written in decimal digits'],
      ['pageSize=1e400', 'must be a number'],
    ]) {
      const res = await api.get(`/webhooks/deliveries?${query}`);
      expect({ query, status: res.status, errors: res.body.errors }).toEqual({
        query,
        status: 400,
        errors: { pageSize: [message] },
      });
    }
    const empty = await api.get('/webhooks/deliveries?pageSize=200&status=pending').expect(200);
    expect(empty.body).toEqual({ items: [], nextCursor: null });
  });

  it('each route needs its scope: reads webhooks:read, the test delivery and retry webhooks:write', async () => {
    const tenant = await createTenant(h.api);
    const readOnly = client(h.api, await createKey(h.api, tenant, { scopes: ['webhooks:read'] }));
    const writeOnly = client(h.api, await createKey(h.api, tenant, { scopes: ['webhooks:write'] }));
    const id = '00000000-0000-0000-0000-000000000000';
    for (const res of [
      await readOnly.post('/webhooks/outbound/test'),
      await readOnly.post(`/webhooks/deliveries/${id}/retry`),
    ])
      expect({ status: res.status, body: res.body }).toEqual({
        status: 403,
        body: { message: 'This API key lacks the scope webhooks:write' },
      });
    for (const res of [
      await writeOnly.get('/webhooks/outbound'),
      await writeOnly.get('/webhooks/events/catalog'),
      await writeOnly.get('/webhooks/deliveries'),
      await writeOnly.get(`/webhooks/deliveries/${id}`),
    ])
      expect({ status: res.status, body: res.body }).toEqual({
        status: 403,
        body: { message: 'This API key lacks the scope webhooks:read' },
      });
  });

  it('malformed delivery ids: 404 for a non-UUID, 400 for NUL or broken percent-encoding, never 5xx', async () => {
    for (const id of ['abc', '00000000-0000-0000-0000-000000000000', 'abc%20', '1;DROP']) {
      await api.get(`/webhooks/deliveries/${id}`).expect(404, { message: 'Delivery not found' });
      await api.post(`/webhooks/deliveries/${id}/retry`).expect(404, { message: 'Delivery not found' });
    }
    for (const id of ['%00', 'a%00b', '%E0%A4%A']) {
      expect((await api.get(`/webhooks/deliveries/${id}`)).status).toBe(400);
      expect((await api.post(`/webhooks/deliveries/${id}/retry`)).status).toBe(400);
    }
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
