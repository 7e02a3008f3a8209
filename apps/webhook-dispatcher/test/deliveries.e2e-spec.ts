import { createHmac } from 'node:crypto';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { WEBHOOK_RPC } from '@tessera/contracts';
import { JobQueues } from '@tessera/platform';
import { type TestEnvironment, UUID_V7 } from '@tessera/testing';
import { Webhook } from 'standardwebhooks';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { dispatcherWithReceiver, enqueue, event, rpc } from './support/harness';
import { type HttpsReceiver, waitFor } from './support/https-receiver';
import { testResolver } from './support/resolver';

let env: TestEnvironment;
let app: NestFastifyApplication;
let receiver: HttpsReceiver;
let db: DataSource;

const TENANT = 'tenant-a';
const scope = { tenantId: TENANT, source: 'custody' };

beforeAll(async () => {
  ({ env, app, receiver } = await dispatcherWithReceiver(
    { WEBHOOK_POLL_MS: '20', WEBHOOK_TIMEOUT_MS: '400' },
    testResolver({
      'rebind.test': [['93.184.216.34'], ['10.0.0.7']],
      'rebind6.test': [['93.184.216.34'], ['::a9fe:a9fe']],
      'flaky.test': [['127.0.0.1'], [], ['127.0.0.1']],
    }),
  ));
  db = app.get(DataSource);
});

afterAll(async () => {
  await app?.close();
  await env?.teardown();
  await receiver?.stop();
});

async function configure(path: string, subscribedEventTypes?: string[] | null) {
  const reply = await rpc(app, WEBHOOK_RPC.PUT_ENDPOINT, {
    ...scope,
    body: { url: receiver.url(path), subscribedEventTypes },
  });
  expect(reply.ok).toBe(true);
  return (reply as { result: { signingSecret: string | null } }).result;
}

async function deliveryFor(eventId: string) {
  return waitFor(
    async () =>
      (await db.query('SELECT id, status FROM webhook_deliveries WHERE event_id = $1', [eventId]))[0],
    (row) => Boolean(row),
  );
}

async function detail(id: string) {
  const reply = await rpc(app, WEBHOOK_RPC.GET_DELIVERY, { ...scope, id });
  return (
    reply as { result: Record<string, unknown> & { status: string; attempts: Record<string, unknown>[] } }
  ).result;
}

async function waitStatus(id: string, status: string, timeoutMs = 10_000) {
  return waitFor(
    () => detail(id),
    (d) => d.status === status,
    timeoutMs,
  );
}

describe('webhook deliveries over HTTPS', () => {
  it('delivers a relayed event with the envelope and both signatures (by hand and with standardwebhooks)', async () => {
    const { signingSecret } = await configure('/ok');
    expect(signingSecret).toMatch(/^whsec_/);
    const e = event();
    await enqueue(app, e);
    const [req] = await waitFor(
      () => receiver.at('/ok'),
      (r) => r.length === 1,
    );
    const body = JSON.parse(req!.rawBody);
    expect(body).toEqual({
      eventType: 'wallet.created',
      entityType: 'wallet',
      entityId: e.entityId,
      timestamp: new Date(e.occurredAt).toISOString(),
      data: e.data,
    });
    expect(Object.keys(body)).toEqual(['eventType', 'entityType', 'entityId', 'timestamp', 'data']);
    // X-Webhook-Signature: lowercase hex HMAC-SHA256 of the raw body, keyed with the whole secret string.
    const expected = createHmac('sha256', Buffer.from(signingSecret!, 'utf8'))
      .update(req!.rawBody)
      .digest('hex');
    expect(req!.headers['x-webhook-signature']).toBe(expected);
    // Standard Webhooks, computed by hand ...
    const key = Buffer.from(signingSecret!.slice('whsec_'.length), 'base64');
    const ts = req!.headers['webhook-timestamp'] as string;
    expect(req!.headers['webhook-id']).toBe(e.eventId);
    expect(Math.abs(Number(ts) - Date.now() / 1000)).toBeLessThan(10);
    const std = createHmac('sha256', key).update(`${e.eventId}.${ts}.${req!.rawBody}`).digest('base64');
    expect(req!.headers['webhook-signature']).toBe(`v1,${std}`);
    // ... and by the official library with nothing but the secret.
    expect(new Webhook(signingSecret!).verify(req!.rawBody, req!.headers as Record<string, string>)).toEqual(
      body,
    );

    const row = await deliveryFor(e.eventId);
    const d = await waitStatus(row.id, 'delivered');
    expect(d).toMatchObject({
      attemptCount: 1,
      eventType: 'wallet.created',
      entityId: e.entityId,
      payload: req!.rawBody,
    });
    expect(d.deliveredAt).not.toBeNull();
    // The inbox row is written in the same statement as the delivery.
    expect(await db.query('SELECT event_type FROM received_events WHERE event_id = $1', [e.eventId])).toEqual(
      [{ event_type: 'wallet.created' }],
    );
    expect(d.attempts).toEqual([
      expect.objectContaining({
        attemptNumber: 1,
        requestUrl: receiver.url('/ok'),
        httpStatusCode: 200,
        success: true,
        errorMessage: null,
        responseBody: 'ok',
      }),
    ]);
    // Both ids are time-ordered (decision 0432): new rows land at the right edge of their primary keys.
    expect(d.id).toMatch(UUID_V7);
    expect(d.attempts[0]!.id).toMatch(UUID_V7);
  });

  it('creates one delivery per event and endpoint even when the event is relayed twice', async () => {
    await configure('/dup');
    const e = event();
    await enqueue(app, e);
    await app.get(JobQueues).add('WEBHOOK_EVENT', e, { jobId: `${e.eventId}-again` });
    await waitFor(
      () => receiver.at('/dup'),
      (r) => r.length >= 1,
    );
    await new Promise((r) => setTimeout(r, 300));
    const rows = await db.query('SELECT count(*)::int AS n FROM webhook_deliveries WHERE event_id = $1', [
      e.eventId,
    ]);
    expect(rows[0].n).toBe(1);
    expect(receiver.at('/dup')).toHaveLength(1);
  });

  it('retries on the compressed schedule and is dead after attempt 5; the same webhook-id every time', async () => {
    await configure('/fail');
    receiver.on('/fail', { status: 500, body: 'boom' });
    const e = event();
    await enqueue(app, e);
    const row = await deliveryFor(e.eventId);
    const d = await waitStatus(row.id, 'dead');
    expect(d.attemptCount).toBe(5);
    expect(d.attempts.map((a) => [a.attemptNumber, a.httpStatusCode, a.success, a.errorMessage])).toEqual([
      [1, 500, false, 'HTTP 500'],
      [2, 500, false, 'HTTP 500'],
      [3, 500, false, 'HTTP 500'],
      [4, 500, false, 'HTTP 500'],
      [5, 500, false, 'HTTP 500'],
    ]);
    expect(d.attempts[0]!.responseBody).toBe('boom');
    const reqs = receiver.at('/fail');
    expect(reqs).toHaveLength(5);
    expect(new Set(reqs.map((r) => r.headers['webhook-id']))).toEqual(new Set([e.eventId]));
    // Gaps follow 10 s, 30 s, 60 s, 5 min scaled by 0.001 (±10 % jitter, plus polling slack): each at least its
    // step less the jitter. Only lower bounds: a loaded machine stretches any gap (449 ms for the first in CI).
    const gaps = reqs.slice(1).map((r, i) => r.at - reqs[i]!.at);
    [9, 27, 54, 270].forEach((least, i) => expect(gaps[i]!).toBeGreaterThanOrEqual(least));
    expect(d.lastError).toBe('HTTP 500');
    await new Promise((r) => setTimeout(r, 400));
    expect(receiver.at('/fail')).toHaveLength(5);
  });

  it('counts a 3xx as a failed attempt and never follows the redirect (even to a private address)', async () => {
    await configure('/redirect');
    receiver.on(
      '/redirect',
      { status: 302, headers: { location: 'https://169.254.169.254/latest/meta-data' } },
      { status: 200 },
    );
    const e = event();
    await enqueue(app, e);
    const row = await deliveryFor(e.eventId);
    const d = await waitStatus(row.id, 'delivered');
    expect(d.attempts.map((a) => [a.httpStatusCode, a.success, a.errorMessage])).toEqual([
      [302, false, 'HTTP 302 (redirects are not followed)'],
      [200, true, null],
    ]);
    expect(receiver.requests.filter((r) => r.path.startsWith('/latest'))).toHaveLength(0);
  });

  it('gives up an attempt after the configured timeout', async () => {
    await configure('/slow');
    receiver.on('/slow', { status: 200, delayMs: 1500 }, { status: 200 });
    const e = event();
    await enqueue(app, e);
    const row = await deliveryFor(e.eventId);
    const d = await waitStatus(row.id, 'delivered');
    expect(d.attempts[0]).toMatchObject({
      success: false,
      httpStatusCode: null,
      errorMessage: 'timed out after 400 ms',
    });
    expect(d.attempts[0]!.durationMs as number).toBeGreaterThanOrEqual(390);
    expect(d.attempts[0]!.durationMs as number).toBeLessThan(1400);
    expect(d.attempts[1]).toMatchObject({ success: true, httpStatusCode: 200 });
  });

  it('re-queues a dead delivery on manual retry and refuses others with 409', async () => {
    await configure('/manual');
    receiver.on('/manual', { status: 503 });
    const e = event();
    await enqueue(app, e);
    const row = await deliveryFor(e.eventId);
    await waitStatus(row.id, 'dead');
    receiver.on('/manual', { status: 204 });
    const retried = await rpc(app, WEBHOOK_RPC.RETRY_DELIVERY, { ...scope, id: row.id });
    expect(retried).toMatchObject({ ok: true, result: { id: row.id } });
    expect(['pending', 'delivered']).toContain((retried as { result: { status: string } }).result.status);
    const d = await waitStatus(row.id, 'delivered');
    expect(d.attemptCount).toBe(6);
    expect(d.attempts[5]).toMatchObject({ attemptNumber: 6, httpStatusCode: 204, success: true });
    expect(await rpc(app, WEBHOOK_RPC.RETRY_DELIVERY, { ...scope, id: row.id })).toEqual({
      ok: false,
      error: { status: 409, message: 'Only failed or dead deliveries can be retried; this one is delivered' },
    });
    expect(
      await rpc(app, WEBHOOK_RPC.RETRY_DELIVERY, { tenantId: 'other', source: 'custody', id: row.id }),
    ).toEqual({
      ok: false,
      error: { status: 404, message: 'Delivery not found' },
    });
    // A custody delivery is no verification product's: 404 there too, never the 403 of another product (0495).
    for (const pattern of [WEBHOOK_RPC.GET_DELIVERY, WEBHOOK_RPC.RETRY_DELIVERY])
      expect(await rpc(app, pattern, { tenantId: 'other', source: 'verification', id: row.id })).toEqual({
        ok: false,
        error: { status: 404, message: 'Delivery not found' },
      });
  });

  it('rotates the secret on a new URL only, and signs with the current secret', async () => {
    const first = await configure('/rotate-a');
    const same = await configure('/rotate-a');
    expect(same.signingSecret).toBeNull();
    const second = await configure('/rotate-b');
    expect(second.signingSecret).toMatch(/^whsec_/);
    expect(second.signingSecret).not.toBe(first.signingSecret);
    const got = await rpc(app, WEBHOOK_RPC.GET_ENDPOINT, scope);
    expect(got).toEqual({
      ok: true,
      result: {
        url: receiver.url('/rotate-b'),
        signingSecret: null,
        subscribedEventTypes: null,
        isConfigured: true,
      },
    });
    const stored = await db.query('SELECT secret_sealed FROM webhook_endpoints WHERE tenant_id = $1', [
      TENANT,
    ]);
    expect(stored[0].secret_sealed).not.toContain(second.signingSecret!.slice(6, 20));
    const e = event();
    await enqueue(app, e);
    const [req] = await waitFor(
      () => receiver.at('/rotate-b'),
      (r) => r.length === 1,
    );
    expect(
      new Webhook(second.signingSecret!).verify(req!.rawBody, req!.headers as Record<string, string>),
    ).toBeTruthy();
    expect(() =>
      new Webhook(first.signingSecret!).verify(req!.rawBody, req!.headers as Record<string, string>),
    ).toThrow();
  });

  it('delivers only subscribed event types', async () => {
    await configure('/subs', ['transaction.created']);
    const skipped = event({ eventType: 'wallet.created' });
    const wanted = event({ eventType: 'transaction.created', entityType: 'transaction' });
    await enqueue(app, skipped);
    await enqueue(app, wanted);
    const reqs = await waitFor(
      () => receiver.at('/subs'),
      (r) => r.length === 1,
    );
    expect(JSON.parse(reqs[0]!.rawBody).eventType).toBe('transaction.created');
    await new Promise((r) => setTimeout(r, 300));
    expect(receiver.at('/subs')).toHaveLength(1);
    expect(await db.query('SELECT 1 FROM webhook_deliveries WHERE event_id = $1', [skipped.eventId])).toEqual(
      [],
    );
    const got = await rpc(app, WEBHOOK_RPC.GET_ENDPOINT, scope);
    expect((got as { result: { subscribedEventTypes: string[] } }).result.subscribedEventTypes).toEqual([
      'transaction.created',
    ]);
    expect(
      await rpc(app, WEBHOOK_RPC.PUT_ENDPOINT, {
        ...scope,
        body: { url: receiver.url('/subs'), subscribedEventTypes: ['nope'] },
      }),
    ).toEqual({
      ok: false,
      error: {
        status: 400,
        message: 'Unknown event types',
        errors: { subscribedEventTypes: ['unknown event type: nope'] },
      },
    });
  });

  it('delivers address-book.changed (a notification outside the catalog) only to an endpoint that lists it', async () => {
    // "Every type" is every catalog type: the contract's envelope has entityType transaction, wallet or balance.
    await configure('/every', null);
    const notification = event({ eventType: 'address-book.changed', entityType: 'address-book' });
    const catalogued = event({ eventType: 'wallet.created' });
    await enqueue(app, notification);
    await enqueue(app, catalogued);
    await waitFor(
      () => receiver.at('/every'),
      (r) => r.some((req) => JSON.parse(req.rawBody).eventType === 'wallet.created'),
    );
    await new Promise((r) => setTimeout(r, 300));
    expect(receiver.at('/every').map((req) => JSON.parse(req.rawBody).eventType)).not.toContain(
      'address-book.changed',
    );
    expect(
      await db.query('SELECT 1 FROM webhook_deliveries WHERE event_id = $1', [notification.eventId]),
    ).toEqual([]);
    // Listed by name, it is accepted and delivered.
    await configure('/every', ['address-book.changed']);
    const listed = event({ eventType: 'address-book.changed', entityType: 'address-book' });
    await enqueue(app, listed);
    const reqs = await waitFor(
      () =>
        receiver.at('/every').filter((req) => JSON.parse(req.rawBody).eventType === 'address-book.changed'),
      (r) => r.length === 1,
    );
    expect(JSON.parse(reqs[0]!.rawBody).entityType).toBe('address-book');
  });

  it('sends a signed webhook.test on demand', async () => {
    const { signingSecret } = await configure('/test-event');
    const reply = await rpc(app, WEBHOOK_RPC.SEND_TEST, scope);
    expect(reply).toMatchObject({ ok: true, result: { status: 'delivered' } });
    const [req] = receiver.at('/test-event');
    const body = new Webhook(signingSecret!).verify(
      req!.rawBody,
      req!.headers as Record<string, string>,
    ) as Record<string, unknown>;
    expect(body).toMatchObject({
      eventType: 'webhook.test',
      entityType: 'webhook',
      data: { message: expect.any(String) },
    });
    expect(await rpc(app, WEBHOOK_RPC.SEND_TEST, { tenantId: 'nobody', source: 'custody' })).toEqual({
      ok: false,
      error: { status: 409, message: 'Webhook endpoint is not configured' },
    });
  });

  it('dead-letters at once a delivery whose host newly resolves to a private address (rebinding)', async () => {
    const reply = await rpc(app, WEBHOOK_RPC.PUT_ENDPOINT, {
      tenantId: 'tenant-rebind',
      source: 'custody',
      body: { url: 'https://rebind.test/hook' },
    });
    expect(reply.ok).toBe(true);
    const e = event({ tenantId: 'tenant-rebind' });
    await enqueue(app, e);
    const row = await deliveryFor(e.eventId);
    const d = await waitFor(
      async () =>
        (await rpc(app, WEBHOOK_RPC.GET_DELIVERY, {
          tenantId: 'tenant-rebind',
          source: 'custody',
          id: row.id,
        })) as { result: { status: string; attempts: unknown[]; attemptCount: number; lastError: string } },
      (r) => r.result.status === 'dead',
    );
    expect(d.result.attemptCount).toBe(1);
    expect(d.result.lastError).toBe('target refused: address 10.0.0.7 is not public (private)');
  });

  it('refuses at delivery an IPv4-compatible IPv6 answer carrying the metadata address (issue 15)', async () => {
    const reply = await rpc(app, WEBHOOK_RPC.PUT_ENDPOINT, {
      tenantId: 'tenant-rebind6',
      source: 'custody',
      body: { url: 'https://rebind6.test/hook' },
    });
    expect(reply.ok).toBe(true);
    const e = event({ tenantId: 'tenant-rebind6' });
    await enqueue(app, e);
    const row = await deliveryFor(e.eventId);
    const d = await waitFor(
      async () =>
        (await rpc(app, WEBHOOK_RPC.GET_DELIVERY, {
          tenantId: 'tenant-rebind6',
          source: 'custody',
          id: row.id,
        })) as { result: { status: string; attemptCount: number; lastError: string } },
      (r) => r.result.status === 'dead',
    );
    expect(d.result.attemptCount).toBe(1);
    expect(d.result.lastError).toBe(
      'target refused: address ::a9fe:a9fe is not public (ipv4Compatible, carries 169.254.169.254)',
    );
  });

  it('retries (does not dead-letter) when the host fails to resolve for a moment', async () => {
    const reply = await rpc(app, WEBHOOK_RPC.PUT_ENDPOINT, {
      tenantId: 'tenant-flaky',
      source: 'custody',
      body: { url: `https://flaky.test:${receiver.port}/flaky` },
    });
    expect(reply.ok).toBe(true);
    const e = event({ tenantId: 'tenant-flaky' });
    await enqueue(app, e);
    const row = await deliveryFor(e.eventId);
    const d = await waitFor(
      async () =>
        (await rpc(app, WEBHOOK_RPC.GET_DELIVERY, {
          tenantId: 'tenant-flaky',
          source: 'custody',
          id: row.id,
        })) as {
          result: { status: string; attempts: { success: boolean; errorMessage: string | null }[] };
        },
      (r) => r.result.status === 'delivered',
    );
    const attempts = d.result.attempts.map((a) => [a.success, a.errorMessage]);
    expect(attempts[0]).toEqual([
      false,
      'target refused: host flaky.test does not resolve (getaddrinfo ENOTFOUND flaky.test)',
    ]);
    expect(attempts.at(-1)).toEqual([true, null]);
    // On a loaded machine an attempt between them may outlast the suite's 400 ms timeout: retried like any other.
    expect(attempts.slice(1, -1).filter(([, message]) => message !== 'timed out after 400 ms')).toEqual([]);
  });

  it('connects to the vetted address but verifies TLS for the hostname', async () => {
    // other.test resolves to the receiver's address, but the certificate does not name it.
    const reply = await rpc(app, WEBHOOK_RPC.PUT_ENDPOINT, {
      tenantId: 'tenant-tls',
      source: 'custody',
      body: { url: `https://other.test:${receiver.port}/tls` },
    });
    expect(reply.ok).toBe(true);
    const e = event({ tenantId: 'tenant-tls' });
    await enqueue(app, e);
    const row = await deliveryFor(e.eventId);
    const d = await waitFor(
      async () =>
        (await rpc(app, WEBHOOK_RPC.GET_DELIVERY, {
          tenantId: 'tenant-tls',
          source: 'custody',
          id: row.id,
        })) as {
          result: { attempts: { success: boolean; errorMessage: string | null }[] };
        },
      (r) => r.result.attempts.length >= 1,
    );
    expect(d.result.attempts[0]!.errorMessage).toMatch(/^ERR_TLS_CERT_ALTNAME_INVALID/);
    expect(receiver.at('/tls')).toHaveLength(0);
  });

  it('lists deliveries newest first with a cursor and a status filter', async () => {
    const page1 = (await rpc(app, WEBHOOK_RPC.LIST_DELIVERIES, { ...scope, query: { pageSize: 3 } })) as {
      result: { items: { id: string; createdAt: string }[]; nextCursor: string };
    };
    expect(page1.result.items).toHaveLength(3);
    const page2 = (await rpc(app, WEBHOOK_RPC.LIST_DELIVERIES, {
      ...scope,
      query: { pageSize: 3, cursor: page1.result.nextCursor },
    })) as typeof page1;
    expect(page2.result.items[0]!.id).not.toBe(page1.result.items[2]!.id);
    expect(page2.result.items[0]!.createdAt <= page1.result.items[2]!.createdAt).toBe(true);
    const dead = (await rpc(app, WEBHOOK_RPC.LIST_DELIVERIES, { ...scope, query: { status: 'dead' } })) as {
      result: { items: { status: string }[]; nextCursor: null };
    };
    expect(dead.result.items.length).toBeGreaterThanOrEqual(1);
    expect(dead.result.items.every((i) => i.status === 'dead')).toBe(true);
    const tooBig = await rpc(app, WEBHOOK_RPC.LIST_DELIVERIES, { ...scope, query: { pageSize: 201 } });
    expect(tooBig).toMatchObject({
      ok: false,
      error: { status: 400, errors: { 'query.pageSize': expect.any(Array) } },
    });
  });

  it('exposes delivery metrics', async () => {
    const res = await request(app.getHttpServer()).get('/metrics').expect(200);
    expect(res.text).toContain('webhook_delivery_attempts_total{outcome="delivered"}');
    expect(res.text).toContain('webhook_outbox_lag_seconds_bucket');
    expect(res.text).toContain('webhook_attempt_duration_seconds_bucket');
    expect(res.text).toContain('webhook_events_queue_depth');
  });
});
