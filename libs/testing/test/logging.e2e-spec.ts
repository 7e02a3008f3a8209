import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import request from 'supertest';
import { bootApp, createTestEnvironment, LogCapture, type TestEnvironment } from '../src';
import { fixtureMigrator, FixtureModule } from './fixture/fixture';

let env: TestEnvironment;
let app: NestFastifyApplication;
const logs = new LogCapture();

const SECRETS = {
  apiSecret: 'api-secret-value-8f7e6d',
  signature: 'signature-value-0a1b2c',
  bearer: 'Bearer bearer-token-value-99',
  signingSecret: 'whsec_signing-secret-value-77',
  seed: 'seed-words-abandon-abandon-about',
};

beforeAll(async () => {
  env = await createTestEnvironment([fixtureMigrator]);
  app = await bootApp(FixtureModule.forRoot({ ...env.env, LOG_LEVEL: 'info' }, { logDestination: logs }), {
    rpc: false,
  });
});

afterAll(async () => {
  await app?.close();
  await env?.teardown();
});

describe('logging', () => {
  it('never prints a secret header or a secret-named field, even on a failed request', async () => {
    await request(app.getHttpServer())
      .post('/fixture/login')
      .set('x-api-key', 'vk_test_visible')
      .set('x-api-secret', SECRETS.apiSecret)
      .set('x-signature', SECRETS.signature)
      .set('authorization', SECRETS.bearer)
      .send({
        user: 'alice',
        signingSecret: SECRETS.signingSecret,
        nested: { hdSeed: SECRETS.seed, apiSecret: SECRETS.apiSecret },
      })
      .expect(401);
    await new Promise((r) => setTimeout(r, 50));
    for (const value of Object.values(SECRETS)) expect(logs.text).not.toContain(value.replace('Bearer ', ''));
    // The lines were written, with the non-secret parts intact and the secret ones masked.
    expect(logs.text).toContain('vk_test_visible');
    expect(logs.text).toContain('alice');
    expect(logs.text).toContain('[REDACTED]');
  });

  it('puts the request id on every line of a request and echoes it as X-Request-Id', async () => {
    const res = await request(app.getHttpServer())
      .post('/fixture/echo')
      .set('x-request-id', 'req-abc-123')
      .send({ a: 1 })
      .expect(201);
    expect(res.headers['x-request-id']).toBe('req-abc-123');
    await new Promise((r) => setTimeout(r, 50));
    const lines = logs.json().filter((l) => JSON.stringify(l).includes('req-abc-123'));
    expect(lines.map((l) => l.msg)).toEqual(expect.arrayContaining(['echo body', 'request completed']));
    for (const line of lines) expect(line.requestId).toBe('req-abc-123');
  });

  it('mints a request id when the caller sends none or an unsafe one', async () => {
    const none = await request(app.getHttpServer()).get('/health');
    expect(none.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    const unsafe = await request(app.getHttpServer())
      .get('/health')
      .set('x-request-id', 'bad id\twith spaces');
    expect(unsafe.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });
});
