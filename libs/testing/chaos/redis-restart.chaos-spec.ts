import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { type ChildProcess, spawn } from 'node:child_process';
import { connect, createServer } from 'node:net';
import request from 'supertest';
import { bootApp, createTestEnvironment, type TestEnvironment } from '../src';
import { fixtureMigrator, FixtureModule } from '../test/fixture/fixture';

/**
 * Chaos (issue 15): a Redis of this test's own, on a free loopback port (never the shared 6379), is
 * killed with SIGKILL mid-run and started again on the same port. While it is away /health answers 503 and
 * names Redis; afterwards everything recovers without a manual step. Bounded: stops itself after 60 s.
 */
let env: TestEnvironment;
let app: NestFastifyApplication;
let redis: ChildProcess | undefined;
let port: number;

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const p = (server.address() as { port: number }).port;
  await new Promise((r) => server.close(r));
  return p;
}

async function startRedis(): Promise<ChildProcess> {
  const child = spawn(
    'redis-server',
    ['--bind', '127.0.0.1', '--port', String(port), '--save', '', '--appendonly', 'no'],
    { stdio: 'ignore' },
  );
  const deadline = Date.now() + 10_000;
  for (;;) {
    const up = await new Promise<boolean>((resolve) => {
      const s = connect(port, '127.0.0.1');
      s.once('connect', () => (s.destroy(), resolve(true)));
      s.once('error', () => resolve(false));
    });
    if (up) return child;
    if (Date.now() > deadline) throw new Error('redis-server did not start');
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function stopRedis(): Promise<void> {
  if (!redis || redis.exitCode !== null || redis.signalCode !== null) return;
  const exited = new Promise((r) => redis!.once('exit', r));
  redis.kill('SIGKILL');
  await exited;
}

beforeAll(async () => {
  port = await freePort();
  redis = await startRedis();
  env = await createTestEnvironment([fixtureMigrator]);
  app = await bootApp(FixtureModule.forRoot({ ...env.env, REDIS_URL: `redis://127.0.0.1:${port}` }), {
    rpc: false,
  });
});

afterAll(async () => {
  await app?.close().catch(() => undefined);
  await stopRedis();
  await env?.teardown();
});

const health = () => request(app.getHttpServer()).get('/health');

it('a Redis restart mid-run: /health reports it while it lasts, then everything recovers', async () => {
  const started = Date.now();
  expect((await health()).status).toBe(200);
  // Traffic runs through the whole outage; no request may hang or answer 500.
  let stop = false;
  const statuses: number[] = [];
  const traffic = (async () => {
    while (!stop) {
      const res = await request(app.getHttpServer()).post('/fixture/items').send({ label: 'chaos' });
      statuses.push(res.status);
      await new Promise((r) => setTimeout(r, 20));
    }
  })();
  await new Promise((r) => setTimeout(r, 500));
  await stopRedis();
  const down = await health();
  expect(down.status).toBe(503);
  expect(down.body.checks.redis.status).toBe('down');
  expect(down.body.checks.postgres.status).toBe('up');
  await new Promise((r) => setTimeout(r, 1000));
  redis = await startRedis();
  const recovered = Date.now();
  let up = await health();
  while (up.status !== 200 && Date.now() - recovered < 20_000) {
    await new Promise((r) => setTimeout(r, 200));
    up = await health();
  }
  expect(up.status).toBe(200);
  stop = true;
  await traffic;
  expect(statuses.filter((s) => s >= 500 && s !== 503)).toEqual([]);
  process.stdout.write(
    `chaos redis: 1 restart, ${statuses.length} requests during the run, recovered in ${Date.now() - recovered} ms, ` +
      `${Date.now() - started} ms in all\n`,
  );
}, 60_000);
