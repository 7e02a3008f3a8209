import { createHmac } from 'node:crypto';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import {
  type DispatcherProcess,
  makeCertificate,
  startDispatcherProcess,
  SETUP_HOOK_TIMEOUT_MS,
} from '@tessera/testing';
import { Client } from 'pg';
import { type Harness, startHarness } from './harness';

let h: Harness;
let dispatcher: DispatcherProcess;
let receiver: Server;
let receiverPort: number;
const received: { body: string; signature: string }[] = [];

beforeAll(async () => {
  const cert = makeCertificate();
  receiver = createServer({ key: cert.key, cert: cert.cert }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({
        body: Buffer.concat(chunks).toString('utf8'),
        signature: String(req.headers['x-webhook-signature']),
      });
      res.end('ok');
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  receiverPort = (receiver.address() as AddressInfo).port;
  h = await startHarness();
  dispatcher = await startDispatcherProcess({ ...h.env.env, WEBHOOK_CA_FILE: cert.certFile });
}, SETUP_HOOK_TIMEOUT_MS);

afterAll(async () => {
  if (dispatcher?.child.exitCode === null) dispatcher.child.kill('SIGCONT');
  await dispatcher?.stop();
  await h?.close();
  receiver?.closeAllConnections();
  await new Promise((resolve) => receiver?.close(resolve));
});

describe('verification webhook configuration, served by the real dispatcher over RPC', () => {
  it('PUT /v1/webhooks shows the secret once; GET never; each product sees only its own', async () => {
    const a = await h.tenant('A');
    const b = await h.tenant('B');
    const put = await h
      .http()
      .put('/v1/webhooks')
      .set(h.auth(a.key))
      .send({ url: 'https://127.0.0.1:9/kyc' })
      .expect(200);
    expect(put.body).toMatchObject({ url: 'https://127.0.0.1:9/kyc', isConfigured: true });
    expect(put.body.signingSecret).toMatch(/^whsec_/);
    const get = await h.http().get('/v1/webhooks').set(h.auth(a.key)).expect(200);
    expect(get.body.signingSecret).toBeNull();
    const other = await h.http().get('/v1/webhooks').set(h.auth(b.key)).expect(200);
    expect(other.body.isConfigured).toBe(false);
  });

  it('needs credentials: 401 {message} without them', async () => {
    const res = await h.http().get('/v1/webhooks').expect(401);
    expect(Object.keys(res.body)).toEqual(['message']);
  });

  it('a refusal names its field and reason in the message (decision 0490); the catalog holds the nine events', async () => {
    const a = await h.tenant('Refusals');
    const put = (body: unknown) =>
      h
        .http()
        .put('/v1/webhooks')
        .set(h.auth(a.key))
        .send(body as object);
    const url = 'https://127.0.0.1:9/kyc';
    const cases: [unknown, string][] = [
      [{}, 'url: is required'],
      [{ url: 123 }, 'url: must be a string'],
      [{ url: 'http://127.0.0.1:9/kyc' }, 'url: URL scheme must be https'],
      [{ url: 'https://10.0.0.1/kyc' }, 'url: address 10.0.0.1 is not public (private)'],
      [{ url: 'https://169.254.169.254/kyc' }, 'url: address 169.254.169.254 is not public (linkLocal)'],
      [{ url: ` ${url}` }, 'url: URL must not contain spaces or control characters'],
      [{ url: 'https://127.0.0.1:0/kyc' }, 'url: URL port must be 1 to 65535'],
      [
        { url, subscribedEventTypes: ['applicantReviewed', 'wallet.created', 'nope'] },
        'subscribedEventTypes: unknown event type: wallet.created',
      ],
      [{ url, subscribedEventTypes: 'applicantReviewed' }, 'subscribedEventTypes: must be an array'],
      // Only the first unknown type is named, however many were sent (decision 0495).
      [
        { url, subscribedEventTypes: Array.from({ length: 100 }, (_, i) => `nope.${i}.`.padEnd(100, 'x')) },
        `subscribedEventTypes: unknown event type: ${'nope.0.'.padEnd(100, 'x')}`,
      ],
    ];
    for (const [body, message] of cases) {
      const res = await put(body);
      expect({ body, status: res.status, answer: res.body }).toEqual({
        body,
        status: 400,
        answer: { message },
      });
    }
    expect((await h.http().get('/v1/webhooks').set(h.auth(a.key)).expect(200)).body.isConfigured).toBe(false);

    const list = (query: string) => h.http().get(`/v1/webhooks/deliveries?${query}`).set(h.auth(a.key));
    for (const [query, message] of [
      ['cursor=abc', 'cursor: invalid cursor'],
      ['cursor=ffffffff-ffff-7fff-bfff-ffffffffffff', 'cursor: invalid cursor'],
      ['pageSize=0', 'pageSize: must be at least 1'],
      ['pageSize=201', 'pageSize: must be at most 200'],
      // One message on the page bound for a huge number (decision 0495); it named the safe-integer bound first.
      ['pageSize=99999999999999999999999', 'pageSize: must be at most 200'],
      ['pageSize=9007199254740993', 'pageSize: must be at most 200'],
      ['pageSize=-99999999999999999999999', 'pageSize: must be at least 1'],
      ['status=bogus', 'status: must be one of pending, delivered, failed, dead'],
    ]) {
      const res = await list(query!);
      expect({ query, status: res.status, answer: res.body }).toEqual({
        query,
        status: 400,
        answer: { message },
      });
    }
    for (const id of ['abc', '00000000-0000-0000-0000-000000000000']) {
      await h
        .http()
        .get(`/v1/webhooks/deliveries/${id}`)
        .set(h.auth(a.key))
        .expect(404, { message: 'Delivery not found' });
      await h
        .http()
        .post(`/v1/webhooks/deliveries/${id}/retry`)
        .set(h.auth(a.key))
        .expect(404, { message: 'Delivery not found' });
    }
    expect((await h.http().get('/v1/webhooks/deliveries/a%00b').set(h.auth(a.key))).status).toBe(400);
    // The catalog is DECISIONS' nine verification events and the test event, nothing of custody.
    const catalog = await h.http().get('/v1/webhooks/events/catalog').set(h.auth(a.key)).expect(200);
    expect(catalog.body.map((e: { eventType: string }) => e.eventType)).toEqual([
      'applicantCreated',
      'applicantPending',
      'applicantReviewed',
      'applicantOnHold',
      'applicantReset',
      'applicantDeactivated',
      'applicantActivated',
      'applicantPersonalInfoChanged',
      'companyChildrenCompleted',
      'webhook.test',
    ]);
    await h
      .http()
      .post('/v1/webhooks/test')
      .set(h.auth(a.key))
      .expect(409, { message: 'Webhook endpoint is not configured' });
  });

  it('a rotation whose reply was lost on the way to the API is rotated again by the repeat PUT (decision 0448)', async () => {
    const a = await h.tenant('Lost reply');
    const url = (path: string) => `https://127.0.0.1:${receiverPort}${path}`;
    const first = await h
      .http()
      .put('/v1/webhooks')
      .set(h.auth(a.key))
      .send({ url: url('/before') })
      .expect(200);
    expect(first.body.signingSecret).toMatch(/^whsec_/);

    // The dispatcher's write waits on a row lock the test holds; the dispatcher is stopped; the lock goes and
    // Postgres commits the rotation on its own. The API's call times out: the partner sees an error.
    const db = new Client({ connectionString: h.env.db.url });
    await db.connect();
    try {
      await db.query('BEGIN');
      await db.query('SELECT 1 FROM webhooks.webhook_endpoints WHERE url = $1 FOR UPDATE', [url('/before')]);
      const lost = h
        .http()
        .put('/v1/webhooks')
        .set(h.auth(a.key))
        .send({ url: url('/hooks') });
      const pending = lost.then((res) => res.status);
      // Read outside the locking transaction: pg_stat_activity is a snapshot within one.
      const waiting = async () =>
        Number(
          (
            await h.sql<{ n: string }>(
              `SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database()
                 AND wait_event_type = 'Lock' AND query LIKE '%INSERT INTO webhook_endpoints%'`,
            )
          )[0]!.n,
        );
      const deadline = Date.now() + 10_000;
      while ((await waiting()) === 0) {
        if (Date.now() > deadline) throw new Error('the PUT never reached the dispatcher');
        await new Promise((r) => setTimeout(r, 20));
      }
      dispatcher.child.kill('SIGSTOP');
      await db.query('COMMIT');
      const stored = async () =>
        (
          await h.sql<{ url: string }>('SELECT url FROM webhooks.webhook_endpoints WHERE url LIKE $1', [
            url('%'),
          ])
        )[0]?.url;
      while ((await stored()) !== url('/hooks')) await new Promise((r) => setTimeout(r, 20));
      expect(await pending).toBeGreaterThanOrEqual(500);
    } finally {
      dispatcher.child.kill('SIGCONT');
      await db.end();
    }

    // The stored secret was never seen by the partner. Repeating the PUT with the same URL hands out a new one.
    const again = await h
      .http()
      .put('/v1/webhooks')
      .set(h.auth(a.key))
      .send({ url: url('/hooks') })
      .expect(200);
    const secret = again.body.signingSecret as string;
    expect(secret).toMatch(/^whsec_/);
    // That one was handed over: a further repeat answers null, as the contract says.
    const repeat = await h
      .http()
      .put('/v1/webhooks')
      .set(h.auth(a.key))
      .send({ url: url('/hooks') })
      .expect(200);
    expect(repeat.body.signingSecret).toBeNull();

    // And it is the secret that signs.
    const before = received.length;
    const test = await h.http().post('/v1/webhooks/test').set(h.auth(a.key)).expect(200);
    expect(test.body.status).toBe('delivered');
    const [delivery] = received.slice(before);
    expect(delivery!.signature).toBe(createHmac('sha256', secret).update(delivery!.body).digest('hex'));
  }, 60_000);

  // After the lost-reply case, whose wait reads the first endpoint on the receiver's port.
  it('a delivery of another product is 403, as any resource of another product (decision 0495); its owner sees it unchanged', async () => {
    const a = await h.tenant('Owner');
    const b = await h.tenant('Other');
    await h
      .http()
      .put('/v1/webhooks')
      .set(h.auth(a.key))
      .send({ url: `https://127.0.0.1:${receiverPort}/owner` })
      .expect(200);
    const test = await h.http().post('/v1/webhooks/test').set(h.auth(a.key)).expect(200);
    expect(test.body.status).toBe('delivered');
    const id = test.body.deliveryId as string;
    const forbidden = { message: 'Delivery belongs to another product' };
    await h.http().get(`/v1/webhooks/deliveries/${id}`).set(h.auth(b.key)).expect(403, forbidden);
    await h.http().post(`/v1/webhooks/deliveries/${id}/retry`).set(h.auth(b.key)).expect(403, forbidden);
    // Nothing of it shows in the other product's list; an id no product has stays 404.
    expect((await h.http().get('/v1/webhooks/deliveries').set(h.auth(b.key)).expect(200)).body.items).toEqual(
      [],
    );
    await h
      .http()
      .get(`/v1/webhooks/deliveries/${id.slice(0, -4)}0000`)
      .set(h.auth(b.key))
      .expect(404, { message: 'Delivery not found' });
    const own = await h.http().get(`/v1/webhooks/deliveries/${id}`).set(h.auth(a.key)).expect(200);
    expect(own.body).toMatchObject({ id, status: 'delivered', attemptCount: 1 });
  });
});
