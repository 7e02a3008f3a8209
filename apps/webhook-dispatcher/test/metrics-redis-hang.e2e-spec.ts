import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { createTestEnvironment, type TcpProxy, testRedisProxy, type TestEnvironment } from '@tessera/testing';
import { JobQueues } from '@tessera/platform';
import request from 'supertest';
import { bootDispatcher, dispatcherMigrator, event } from './support/harness';

/**
 * GET /metrics while Redis hangs (decision 0491): the queue-depth gauge asks BullMQ for a count on the queue
 * connection, which has no command timeout. The scrape waited for as long as the hang lasted; now it answers
 * with the last depth read.
 */
describe('dispatcher metrics while Redis hangs', () => {
  let env: TestEnvironment;
  let proxy: TcpProxy;
  let app: NestFastifyApplication | undefined;

  beforeAll(async () => {
    env = await createTestEnvironment([dispatcherMigrator()]);
    proxy = await testRedisProxy();
    app = await bootDispatcher(env, { REDIS_URL: proxy.url('redis') });
  }, 60_000);
  afterAll(async () => {
    proxy?.release();
    await app?.close();
    await proxy?.close();
    await env?.teardown();
  });

  it('answers promptly with the depth last read, not after the hang', async () => {
    const scrape = () => request(app!.getHttpServer()).get('/metrics').timeout(8000);
    const depth = (text: string) => /^webhook_events_queue_depth (\d+)$/m.exec(text)?.[1];
    // One event due in an hour: the depth is 1, not the gauge's initial 0, for as long as the test lasts.
    await app!.get(JobQueues).add('WEBHOOK_EVENT', event(), { delay: 3_600_000 });
    expect(depth((await scrape().expect(200)).text)).toBe('1');
    proxy.hold();
    try {
      const started = Date.now();
      const res = await scrape();
      expect({ status: res.status, depth: depth(res.text) }).toEqual({ status: 200, depth: '1' });
      expect(Date.now() - started).toBeLessThan(2000);
    } finally {
      proxy.release();
    }
    expect(depth((await scrape().expect(200)).text)).toBe('1');
  }, 30_000);
});
