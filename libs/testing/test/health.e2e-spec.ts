import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { RPC, pingReply } from '@tessera/contracts';
import { normalizeError, RpcClient } from '@tessera/platform';
import request from 'supertest';
import {
  bootApp,
  createTestEnvironment,
  startTcpProxy,
  type TcpProxy,
  type TestEnvironment,
  untilTrue,
} from '../src';
import { fixtureMigrator, FixtureModule } from './fixture/fixture';

let env: TestEnvironment;
let proxy: TcpProxy;
let app: NestFastifyApplication;

beforeAll(async () => {
  env = await createTestEnvironment([fixtureMigrator]);
  proxy = await startTcpProxy('127.0.0.1', 6379);
  app = await bootApp(FixtureModule.forRoot({ ...env.env, REDIS_URL: proxy.url('redis') }), { rpc: false });
});

afterAll(async () => {
  await app?.close();
  await proxy?.close();
  await env?.teardown();
});

describe('/health', () => {
  it('reports Postgres and Redis up with 200', async () => {
    const res = await request(app.getHttpServer()).get('/health').expect(200);
    expect(res.body).toMatchObject({
      status: 'ok',
      checks: { postgres: { status: 'up' }, redis: { status: 'up' } },
    });
  });

  it('answers 503 when Redis becomes unreachable, and 200 again when it is back', async () => {
    proxy.cut();
    const down = await request(app.getHttpServer()).get('/health').expect(503);
    expect(down.body).toMatchObject({
      status: 'error',
      checks: { postgres: { status: 'up' }, redis: { status: 'down' } },
    });
    proxy.restore();
    await untilTrue(
      async () => (await request(app.getHttpServer()).get('/health')).status === 200,
      '/health to answer 200',
    );
  });
});

describe('/metrics', () => {
  it('serves Prometheus text with the HTTP latency histogram', async () => {
    await request(app.getHttpServer()).get('/fixture/items').expect(200);
    const res = await request(app.getHttpServer()).get('/metrics').expect(200);
    expect(res.headers['content-type']).toMatch(/text\/plain/);
    expect(res.text).toMatch(
      /http_request_duration_seconds_count\{method="GET",route="\/fixture\/items",status_code="200"\} 1/,
    );
    expect(res.text).toContain('process_cpu_user_seconds_total');
  });

  it('with METRICS_TOKEN set, answers only its bearer (issue 15); unset in production it does not exist', async () => {
    const token = 'metrics-token-0123456789';
    const guarded = await bootApp(FixtureModule.forRoot({ ...env.env, METRICS_TOKEN: token }), {
      rpc: false,
    });
    const closed = await bootApp(FixtureModule.forRoot({ ...env.env, NODE_ENV: 'production' }), {
      rpc: false,
    });
    try {
      const anonymous = await request(guarded.getHttpServer()).get('/metrics').expect(401);
      expect(anonymous.body).toEqual({ message: 'A valid metrics bearer token is required' });
      expect(anonymous.headers['www-authenticate']).toMatch(/^Bearer/);
      await request(guarded.getHttpServer())
        .get('/metrics')
        .set('authorization', 'Bearer wrong-wrong-wrong-w')
        .expect(401);
      const ok = await request(guarded.getHttpServer())
        .get('/metrics')
        .set('authorization', `Bearer ${token}`)
        .expect(200);
      expect(ok.text).toContain('process_cpu_user_seconds_total');
      await request(closed.getHttpServer()).get('/metrics').expect(404);
    } finally {
      await guarded.close();
      await closed.close();
    }
  });
});

describe('Redis RPC between services', () => {
  it('answers a ping on the namespaced channel, and ignores other namespaces', async () => {
    const server = await bootApp(FixtureModule.forRoot(env.env));
    const client = new RpcClient(env.env.REDIS_URL, env.env.QUEUE_PREFIX);
    const stranger = new RpcClient(env.env.REDIS_URL, `${env.env.QUEUE_PREFIX}-other`);
    try {
      const reply = await client.send(RPC.PING('fixture'), {}, pingReply);
      expect(reply.service).toBe('fixture');
      // Nobody answers in that namespace: a 503 for the caller's client to retry, never a 500.
      const unanswered = await stranger
        .send(RPC.PING('fixture'), {}, pingReply, 500)
        .catch((e: unknown) => e);
      expect(normalizeError(unanswered)).toEqual({
        status: 503,
        message: 'Service temporarily unavailable; retry with back-off',
        errors: undefined,
      });
    } finally {
      await client.onApplicationShutdown();
      await stranger.onApplicationShutdown();
      await server.close();
    }
  });
});
