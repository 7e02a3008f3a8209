import { join } from 'node:path';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { bootApp, createTestEnvironment, migratorFor, type TestEnvironment } from '@tessera/testing';
import { AppModule as DispatcherModule } from '@tessera/webhook-dispatcher/dist/app.module';
import { loadEnv as dispatcherEnv } from '@tessera/webhook-dispatcher/dist/config/env';
import { databaseOptions } from '@tessera/webhook-dispatcher/dist/database/database';
import { Webhook } from 'standardwebhooks';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { FixtureApiModule, startReceiver } from './fixture';

let env: TestEnvironment;
let dispatcher: NestFastifyApplication;
let custody: NestFastifyApplication;
let verification: NestFastifyApplication;
let receiver: Awaited<ReturnType<typeof startReceiver>>;

const dispatcherMigrations = join(
  require.resolve('@tessera/webhook-dispatcher/dist/app.module'),
  '../database/migrations',
);

beforeAll(async () => {
  receiver = await startReceiver();
  env = await createTestEnvironment([migratorFor(databaseOptions, dispatcherMigrations)]);
  dispatcher = await bootApp(
    DispatcherModule.forRoot(
      dispatcherEnv({
        ...env.env,
        WEBHOOK_ALLOW_PRIVATE_TARGETS: '127.0.0.1/32',
        WEBHOOK_CA_FILE: receiver.caFile,
        WEBHOOK_TIME_SCALE: '0.001',
        WEBHOOK_POLL_MS: '20',
      }),
    ),
  );
  custody = await bootApp(FixtureApiModule.forRoot(env.env, 'custody'), { rpc: false });
  verification = await bootApp(FixtureApiModule.forRoot(env.env, 'verification'), { rpc: false });
});

afterAll(async () => {
  await custody?.close();
  await verification?.close();
  await dispatcher?.close();
  await env?.teardown();
  await receiver?.stop();
});

const as = (app: NestFastifyApplication, tenant = 'tenant-1') => ({
  get: (url: string) => request(app.getHttpServer()).get(url).set('x-tenant', tenant),
  put: (url: string) => request(app.getHttpServer()).put(url).set('x-tenant', tenant),
  post: (url: string) => request(app.getHttpServer()).post(url).set('x-tenant', tenant),
});

async function until<T>(fn: () => Promise<T>, ok: (v: T) => boolean): Promise<T> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const v = await fn();
    if (ok(v) || Date.now() > deadline) return v;
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe('custody webhook endpoints', () => {
  it('needs the app guard', async () => {
    await request(custody.getHttpServer()).get('/webhooks/outbound').expect(401);
  });

  it('GET before configuration: not configured', async () => {
    const res = await as(custody, 'fresh').get('/webhooks/outbound').expect(200);
    expect(res.body).toEqual({
      url: null,
      signingSecret: null,
      subscribedEventTypes: null,
      isConfigured: false,
    });
  });

  it('PUT returns the secret once; same URL gives null; new URL rotates; GET never shows it', async () => {
    const first = await as(custody)
      .put('/webhooks/outbound')
      .send({ url: receiver.url('/c1') })
      .expect(200);
    expect(first.body).toEqual({
      url: receiver.url('/c1'),
      signingSecret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{43}=$/),
      subscribedEventTypes: null,
      isConfigured: true,
    });
    const again = await as(custody)
      .put('/webhooks/outbound')
      .send({ url: receiver.url('/c1') })
      .expect(200);
    expect(again.body.signingSecret).toBeNull();
    const rotated = await as(custody)
      .put('/webhooks/outbound')
      .send({ url: receiver.url('/c2'), subscribedEventTypes: ['transaction.created', 'balance.updated'] })
      .expect(200);
    expect(rotated.body.signingSecret).toMatch(/^whsec_/);
    expect(rotated.body.signingSecret).not.toBe(first.body.signingSecret);
    const got = await as(custody).get('/webhooks/outbound').expect(200);
    expect(got.body).toEqual({
      url: receiver.url('/c2'),
      signingSecret: null,
      subscribedEventTypes: ['transaction.created', 'balance.updated'],
      isConfigured: true,
    });
  });

  it('PUT refuses http:// and a missing url with the custody error shape', async () => {
    const res = await as(custody)
      .put('/webhooks/outbound')
      .send({ url: 'http://example.com/hook' })
      .expect(400);
    expect(res.body).toEqual({
      message: 'Invalid webhook URL',
      errors: { url: ['URL scheme must be https'] },
    });
    const missing = await as(custody).put('/webhooks/outbound').send({}).expect(400);
    expect(missing.body.errors).toEqual({ url: [expect.any(String)] });
  });

  it('two PUTs of one new URL at once: one returns the secret that signs, the other 409 (decision 0448)', async () => {
    const tenant = 'tenant-put-race';
    await as(custody, tenant)
      .put('/webhooks/outbound')
      .send({ url: receiver.url('/race-old') })
      .expect(200);
    // Both PUTs wait on the endpoint's row, then rotate one after the other: the first one's secret is
    // replaced before its reply is acknowledged.
    const db = dispatcher.get(DataSource);
    const lock = db.createQueryRunner();
    await lock.connect();
    await lock.startTransaction();
    let answers: request.Response[];
    try {
      await lock.query('SELECT 1 FROM webhook_endpoints WHERE tenant_id = $1 FOR UPDATE', [tenant]);
      const racing = [0, 1].map(() =>
        as(custody, tenant)
          .put('/webhooks/outbound')
          .send({ url: receiver.url('/race-new') })
          .then((r) => r),
      );
      await until(
        async () =>
          Number(
            (
              await db.query(
                `SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database()
                   AND wait_event_type = 'Lock' AND query LIKE '%INSERT INTO webhook_endpoints%'`,
              )
            )[0].n,
          ),
        (n) => n === 2,
      );
      await lock.commitTransaction();
      answers = await Promise.all(racing);
    } finally {
      await lock.release();
    }
    expect(answers.map((r) => r.status).sort()).toEqual([200, 409]);
    const secret = answers.find((r) => r.status === 200)!.body.signingSecret as string;
    expect(secret).toMatch(/^whsec_/);
    await as(custody, tenant).post('/webhooks/outbound/test').expect(200);
    const req = receiver.requests.find((r) => r.path === '/race-new')!;
    expect(() =>
      new Webhook(secret).verify(req.rawBody, req.headers as Record<string, string>),
    ).not.toThrow();
    const again = await as(custody, tenant)
      .put('/webhooks/outbound')
      .send({ url: receiver.url('/race-new') });
    expect(again.body.signingSecret).toBeNull();
  });

  it('POST /webhooks/outbound/test sends a signed webhook.test, visible in deliveries with attempts', async () => {
    const put = await as(custody, 'tenant-test')
      .put('/webhooks/outbound')
      .send({ url: receiver.url('/ct') })
      .expect(200);
    const secret = put.body.signingSecret as string;
    const res = await as(custody, 'tenant-test').post('/webhooks/outbound/test').expect(200);
    expect(res.body).toEqual({
      deliveryId: expect.any(String),
      eventId: expect.any(String),
      status: 'delivered',
    });
    const req = receiver.requests.find((r) => r.path === '/ct')!;
    const body = new Webhook(secret).verify(req.rawBody, req.headers as Record<string, string>);
    expect(body).toMatchObject({ eventType: 'webhook.test', entityId: res.body.eventId });

    const list = await as(custody, 'tenant-test').get('/webhooks/deliveries').expect(200);
    expect(list.body).toEqual({
      items: [expect.objectContaining({ id: res.body.deliveryId, status: 'delivered', attemptCount: 1 })],
      nextCursor: null,
    });
    const detail = await as(custody, 'tenant-test')
      .get(`/webhooks/deliveries/${res.body.deliveryId}`)
      .expect(200);
    expect(detail.body).toMatchObject({
      id: res.body.deliveryId,
      eventType: 'webhook.test',
      entityType: 'webhook',
      payload: req.rawBody,
      status: 'delivered',
      attempts: [
        {
          attemptNumber: 1,
          requestUrl: receiver.url('/ct'),
          httpStatusCode: 200,
          success: true,
          responseBody: 'ok',
          errorMessage: null,
          durationMs: expect.any(Number),
          attemptedAt: expect.any(String),
          id: expect.any(String),
        },
      ],
    });
    await as(custody, 'someone-else')
      .get(`/webhooks/deliveries/${res.body.deliveryId}`)
      .expect(404, { message: 'Delivery not found' });
  });

  it('POST /webhooks/deliveries/{id}/retry re-queues a dead delivery; 409 for a delivered one', async () => {
    await as(custody, 'tenant-retry')
      .put('/webhooks/outbound')
      .send({ url: receiver.url('/cr') })
      .expect(200);
    receiver.status.set('/cr', 500);
    const test = await as(custody, 'tenant-retry').post('/webhooks/outbound/test').expect(200);
    expect(test.body.status).toBe('failed');
    const dead = await until(
      () => as(custody, 'tenant-retry').get(`/webhooks/deliveries/${test.body.deliveryId}`),
      (r) => r.body.status === 'dead',
    );
    expect(dead.body.attemptCount).toBe(5);
    const listDead = await as(custody, 'tenant-retry').get('/webhooks/deliveries?status=dead').expect(200);
    expect(listDead.body.items.map((i: { id: string }) => i.id)).toEqual([test.body.deliveryId]);
    receiver.status.set('/cr', 200);
    await as(custody, 'tenant-retry').post(`/webhooks/deliveries/${test.body.deliveryId}/retry`).expect(200);
    const done = await until(
      () => as(custody, 'tenant-retry').get(`/webhooks/deliveries/${test.body.deliveryId}`),
      (r) => r.body.status === 'delivered',
    );
    expect(done.body.attempts).toHaveLength(6);
    await as(custody, 'tenant-retry')
      .post(`/webhooks/deliveries/${test.body.deliveryId}/retry`)
      .expect(409, { message: 'Only failed or dead deliveries can be retried; this one is delivered' });
  });

  it('GET /webhooks/deliveries: pageSize default 20, max 200, 400 above; cursor pages', async () => {
    await as(custody, 'tenant-page')
      .put('/webhooks/outbound')
      .send({ url: receiver.url('/cp') })
      .expect(200);
    for (let i = 0; i < 23; i++) await as(custody, 'tenant-page').post('/webhooks/outbound/test').expect(200);
    const first = await as(custody, 'tenant-page').get('/webhooks/deliveries').expect(200);
    expect(first.body.items).toHaveLength(20);
    expect(first.body.nextCursor).toEqual(expect.any(String));
    const second = await as(custody, 'tenant-page')
      .get(`/webhooks/deliveries?cursor=${first.body.nextCursor}`)
      .expect(200);
    expect(second.body.items).toHaveLength(3);
    expect(second.body.nextCursor).toBeNull();
    const ids = new Set([...first.body.items, ...second.body.items].map((i: { id: string }) => i.id));
    expect(ids.size).toBe(23);
    await as(custody, 'tenant-page').get('/webhooks/deliveries?pageSize=200').expect(200);
    const tooBig = await as(custody, 'tenant-page').get('/webhooks/deliveries?pageSize=201').expect(400);
    expect(tooBig.body.errors).toEqual({ pageSize: [expect.any(String)] });
    await as(custody, 'tenant-page').get('/webhooks/deliveries?status=bogus').expect(400);
  });

  it('GET /webhooks/events/catalog lists the four custody types and webhook.test', async () => {
    const res = await as(custody).get('/webhooks/events/catalog').expect(200);
    expect(res.body.map((e: { eventType: string }) => e.eventType)).toEqual([
      'transaction.created',
      'transaction.status.updated',
      'wallet.created',
      'balance.updated',
      'webhook.test',
    ]);
    const balance = res.body.find((e: { eventType: string }) => e.eventType === 'balance.updated');
    expect(balance.entityType).toBe('balance');
    expect(Object.keys(balance.dataSchema.properties)).toEqual(['vaultAccountId', 'assetId']);
    const status = res.body.find((e: { eventType: string }) => e.eventType === 'transaction.status.updated');
    expect(status.dataSchema.properties).toHaveProperty('previousStatus');
    expect(status.dataSchema.properties).toHaveProperty('failureReason');
    expect(status.dataSchema.properties).toHaveProperty('completedAt');
  });
});

describe('verification webhook endpoints', () => {
  it('PUT and GET /v1/webhooks, catalog and deliveries under /v1/webhooks', async () => {
    const put = await as(verification)
      .put('/v1/webhooks')
      .send({ url: receiver.url('/v1'), subscribedEventTypes: ['applicantReviewed'] })
      .expect(200);
    expect(put.body).toMatchObject({
      signingSecret: expect.stringMatching(/^whsec_/),
      subscribedEventTypes: ['applicantReviewed'],
      isConfigured: true,
    });
    // Custody and verification configurations of one tenant are separate.
    const custodyView = await as(custody).get('/webhooks/outbound').expect(200);
    expect(custodyView.body.url).toBe(receiver.url('/c2'));
    const got = await as(verification).get('/v1/webhooks').expect(200);
    expect(got.body).toEqual({
      url: receiver.url('/v1'),
      signingSecret: null,
      subscribedEventTypes: ['applicantReviewed'],
      isConfigured: true,
    });
    const catalog = await as(verification).get('/v1/webhooks/events/catalog').expect(200);
    expect(catalog.body.map((e: { eventType: string }) => e.eventType)).toContain('applicantReviewed');
    const reviewed = catalog.body.find((e: { eventType: string }) => e.eventType === 'applicantReviewed');
    expect(Object.keys(reviewed.dataSchema.properties)).toEqual([
      'applicantId',
      'externalUserId',
      'levelName',
      'reviewStatus',
      'reviewResult',
      'steps',
      'sandbox',
      'createdAtUtc',
    ]);
    const test = await as(verification).post('/v1/webhooks/test').expect(200);
    expect(test.body.status).toBe('delivered');
    const list = await as(verification).get('/v1/webhooks/deliveries').expect(200);
    expect(list.body.items[0].id).toBe(test.body.deliveryId);
    await as(verification).get(`/v1/webhooks/deliveries/${test.body.deliveryId}`).expect(200);
    const wrong = await as(verification)
      .put('/v1/webhooks')
      .send({ url: receiver.url('/v1'), subscribedEventTypes: ['wallet.created'] })
      .expect(400);
    // The verification shape has no `errors` member: the field and the reason are in the message (decision 0490).
    expect(wrong.body).toEqual({ message: 'subscribedEventTypes: unknown event type: wallet.created' });
  });
});
