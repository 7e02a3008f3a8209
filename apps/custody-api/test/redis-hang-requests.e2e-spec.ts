import { PermitLeases, RateLimiter } from '@tessera/auth';
import {
  expectPromptUnavailable,
  HANG_COMMAND_TIMEOUT_MS as COMMAND_TIMEOUT_MS,
  type TcpProxy,
  testRedisProxy as redisProxy,
} from '@tessera/testing';
import Redis from 'ioredis';
import { client, createKey, createTenant, type Harness, startHarness } from './support';

/** Resolves to how long `promise` took, or to undefined when it is still pending after `ms`. */
async function timed(promise: Promise<unknown>, ms: number): Promise<number | undefined> {
  const started = Date.now();
  let timer: NodeJS.Timeout | undefined;
  const gaveUp = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), ms)));
  const took = promise.then(() => Date.now() - started);
  return Promise.race([took, gaveUp]).finally(() => clearTimeout(timer));
}

/**
 * A Redis that hangs while the API runs (decision 0484): it accepts the connection and answers nothing (the test
 * proxy is held, as in decision 0478's shutdown case). A signed request needs Redis (replay claim, per-key limit).
 */
describe('custody-api while Redis hangs', () => {
  let proxy: TcpProxy;
  let h: Harness;

  beforeAll(async () => {
    proxy = await redisProxy();
    h = await startHarness(
      { REDIS_URL: proxy.url('redis'), REDIS_COMMAND_TIMEOUT_MS: String(COMMAND_TIMEOUT_MS) },
      { worker: false },
    );
  });

  afterAll(async () => {
    proxy.release();
    await h.close();
    await proxy.close();
  });

  it('a signed request answers 503 with Retry-After: 1 within the command timeout, not a hang', async () => {
    const tenantId = await createTenant(h.api);
    const api = client(h.api, await createKey(h.api, tenantId));
    await api.get('/assets').expect(200);
    proxy.hold();
    try {
      await expectPromptUnavailable(() => api.get('/assets'));
    } finally {
      proxy.release();
    }
    // Redis answering again, the next request goes through.
    await api.get('/assets').expect(200);
  }, 30_000);
});

describe('PermitLeases.close while Redis hangs', () => {
  it('hands back what it can and returns within its bound, so the shutdown goes on', async () => {
    const proxy = await redisProxy();
    // No command timeout on this connection: the bound must be the leases' own.
    const redis = new Redis(proxy.url('redis'), { maxRetriesPerRequest: null });
    try {
      const limiter = new RateLimiter(redis, `t-hang-${process.pid}-${Date.now()}`);
      const leases = new PermitLeases(
        limiter,
        { limit: 100_000, windowSeconds: 60, segments: 4 },
        { leaseMs: 60_000 },
      );
      // The second take of a busy bucket takes a permit ahead and holds it.
      await leases.take('key:a', 1);
      await leases.take('key:a', 1);
      proxy.hold();
      const tookMs = await timed(leases.close(), 8000);
      expect(tookMs).toBeDefined();
      expect(tookMs!).toBeLessThan(1000 + 500);
    } finally {
      proxy.release();
      redis.disconnect();
      await proxy.close();
    }
  }, 30_000);
});
