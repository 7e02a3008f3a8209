import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type Redis from 'ioredis';
import { CacheInvalidationService } from '@tessera/platform';
import { bootApp } from '@tessera/testing';
import request from 'supertest';
import { runCli } from '../src/cli/run';
import { AppModule } from '../src/app.module';
import { loadEnv } from '../src/config/env';
import { type Harness, INDIVIDUAL_LEVEL, startHarness } from './harness';

/**
 * Two replicas on one database and one Redis namespace. The row caches live a minute here, so anything
 * seen sooner than that on replica B came from the Redis invalidation, not from the TTL.
 */
const CACHE = { ROW_CACHE_TTL_MS: '60000' };

let a: Harness;
let b: NestFastifyApplication;
const onB = () => request(b.getHttpServer());

beforeAll(async () => {
  a = await startHarness(CACHE);
  b = await bootApp(AppModule.forRoot(loadEnv({ ...a.env.env, ...CACHE })), { rpc: false });
});
afterAll(async () => {
  await b?.close();
  await a?.close();
});

/** Polls `probe` until it holds, for at most `withinMs`; returns how long that took, or fails. */
async function within(withinMs: number, probe: () => Promise<boolean>): Promise<number> {
  const started = Date.now();
  for (;;) {
    if (await probe()) return Date.now() - started;
    if (Date.now() - started > withinMs) throw new Error(`not seen within ${withinMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('cross-replica cache invalidation', () => {
  it('control: replica B serves a cached credential even after the row changes behind its back', async () => {
    const { key } = await a.tenant('Control');
    await onB().get('/v1/levels').set(a.auth(key)).expect(200);
    // A write that bypasses the service publishes nothing: B keeps its entry (TTL backstop only).
    await a.sql('UPDATE api_keys SET active = false WHERE api_key = $1', [key.apiKey]);
    await onB().get('/v1/levels').set(a.auth(key)).expect(200);
  });

  it('a key deactivated through replica A answers 401 on replica B at once', async () => {
    const { key } = await a.tenant('Deactivate');
    await onB().get('/v1/levels').set(a.auth(key)).expect(200);
    await a.http().get('/v1/levels').set(a.auth(key)).expect(200);
    await a.admin('post', `/keys/${key.apiKey}/deactivate`);
    await within(500, async () => (await onB().get('/v1/levels').set(a.auth(key))).status === 401);
    const res = await onB().get('/v1/levels').set(a.auth(key)).expect(401);
    expect(res.body).toEqual({ message: 'Invalid credentials' });
    await a.http().get('/v1/levels').set(a.auth(key)).expect(401);
  });

  it('a key deactivated by the CLI (another process) answers 401 on a running replica at once', async () => {
    const { key } = await a.tenant('Cli');
    await onB().get('/v1/levels').set(a.auth(key)).expect(200);
    expect((await runCli(['deactivate-key', '--key', key.apiKey], a.env.env)).code).toBe(0);
    await within(500, async () => (await onB().get('/v1/levels').set(a.auth(key))).status === 401);
  });

  it('a level created or edited through replica A is what replica B serves at once', async () => {
    const { productId, key } = await a.tenant('Levels');
    // B caches "no such level" and then the level itself.
    await onB().get('/v1/levels/BASIC_KYC').set(a.auth(key)).expect(404);
    await a.admin('post', `/products/${productId}/levels`, INDIVIDUAL_LEVEL);
    await within(500, async () => (await onB().get('/v1/levels/BASIC_KYC').set(a.auth(key))).status === 200);

    await onB().get('/v1/levels/BASIC_KYC').set(a.auth(key)).expect(200);
    await a.admin('patch', `/products/${productId}/levels/BASIC_KYC`, { isActive: false });
    await within(500, async () => {
      const res = await onB().get('/v1/levels/BASIC_KYC').set(a.auth(key));
      return res.status === 200 && res.body.isActive === false;
    });
  });

  it('a level edit reaches the level B resolves by id (applicant steps)', async () => {
    const { productId, key } = await a.tenant('Steps');
    await a.admin('post', `/products/${productId}/levels`, INDIVIDUAL_LEVEL);
    await a.http().post('/v1/applicants').set(a.auth(key)).send({ externalUserId: 'u1' }).expect(201);
    const kinds = async () =>
      (await onB().get('/v1/applicants/u1/steps').set(a.auth(key)).expect(200)).body.steps.map(
        (s: { kind: string }) => s.kind,
      );
    expect(await kinds()).toEqual(['personal_information', 'identity_doc', 'selfie']);
    await a.admin('patch', `/products/${productId}/levels/BASIC_KYC`, {
      steps: [{ kind: 'identity_doc' }, { kind: 'selfie', optional: true }],
    });
    await within(500, async () => JSON.stringify(await kinds()) === JSON.stringify(['identity_doc']));
  });

  it('a replica whose subscription reconnects clears its caches (it may have missed messages)', async () => {
    const { key } = await a.tenant('Reconnect');
    await onB().get('/v1/levels').set(a.auth(key)).expect(200);
    // Missed: a change no message announces, like one published while B was disconnected.
    await a.sql('UPDATE api_keys SET active = false WHERE api_key = $1', [key.apiKey]);
    await onB().get('/v1/levels').set(a.auth(key)).expect(200);
    const subscriber = (b.get(CacheInvalidationService) as unknown as { subscriber: Redis }).subscriber;
    subscriber.disconnect(true);
    await within(2000, async () => (await onB().get('/v1/levels').set(a.auth(key))).status === 401);
  });
});
