import { join } from 'node:path';
import { WEBHOOK_RPC } from '@tessera/contracts';
import { RpcClient } from '@tessera/platform';
import {
  createTestEnvironment,
  describeRedisOutage,
  type ServiceProcess,
  startServiceProcess,
  startTcpProxy,
  type TcpProxy,
  TEST_REDIS_URL,
  type TestEnvironment,
} from '@tessera/testing';
import { z } from 'zod';
import { dispatcherMigrator } from './support/harness';

/**
 * The built dispatcher while Redis is unreachable (decision 0470): started, it exits 1 with one line naming Redis
 * (it exited 1 with ioredis's "Connection is closed." and a stack); stopped, it exits 0 at once (it waited out
 * SHUTDOWN_TIMEOUT_MS for its worker's connection and exited 1).
 */
describeRedisOutage('@tessera/webhook-dispatcher', dispatcherMigrator(), {
  dispatcher: join(__dirname, '../dist/main.js'),
});

/**
 * Nest's Redis transport stopped reconnecting after 10 attempts 500 ms apart: after an outage longer than about
 * 5 s, the dispatcher's RPC server and a partner API's RPC client never came back, and every RPC answered 503
 * until the processes restarted (decision 0470). Both sides here reach Redis through one proxy that is cut for 7 s.
 */
describe('RPC after a Redis outage longer than the transport used to retry', () => {
  let env: TestEnvironment;
  let proxy: TcpProxy;
  let dispatcher: ServiceProcess | undefined;
  let client: RpcClient | undefined;

  beforeAll(async () => {
    env = await createTestEnvironment([dispatcherMigrator()]);
    proxy = await startTcpProxy('127.0.0.1', Number(new URL(TEST_REDIS_URL).port || 6379));
  }, 60_000);
  afterAll(async () => {
    await client?.onApplicationShutdown();
    await dispatcher?.stop();
    await proxy?.close();
    await env?.teardown();
  });

  it('the dispatcher answers its RPC again once Redis is back', async () => {
    const redisUrl = proxy.url('redis');
    dispatcher = await startServiceProcess('webhook-dispatcher', join(__dirname, '../dist/main.js'), {
      ...env.env,
      REDIS_URL: redisUrl,
    });
    client = new RpcClient(redisUrl, env.env.QUEUE_PREFIX!);
    const catalog = () =>
      client!.send(WEBHOOK_RPC.CATALOG, { tenantId: 'tenant-outage', source: 'custody' }, z.unknown(), 3000);
    expect(await catalog()).toMatchObject({ ok: true });

    proxy.cut();
    await new Promise((r) => setTimeout(r, 7000));
    proxy.restore();

    let answer: unknown;
    const deadline = Date.now() + 15_000;
    while (answer === undefined && Date.now() < deadline) {
      answer = await catalog().catch(() => undefined);
      if (answer === undefined) await new Promise((r) => setTimeout(r, 200));
    }
    expect(answer).toMatchObject({ ok: true });
  }, 120_000);
});
