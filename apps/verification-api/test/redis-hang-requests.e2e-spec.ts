import { startTcpProxy, TEST_REDIS_URL, type TcpProxy } from '@tessera/testing';
import { type Harness, startHarness } from './harness';

/** The command timeout the suite gives the request path's Redis connection (REDIS_COMMAND_TIMEOUT_MS). */
const COMMAND_TIMEOUT_MS = 500;
/** What a request may take on top of it: the guard's other work, and a loaded 2-core machine. */
const SLACK_MS = 1500;

/**
 * A Redis that hangs while the API runs (decision 0484): the test proxy is held, as in decision 0478's shutdown
 * case. A partner request counts against its credential's limit, a hosted-SDK call against its client IP: both in
 * Redis, so both answer the contract's 503 within the command timeout instead of waiting for ever.
 */
describe('verification-api while Redis hangs', () => {
  let proxy: TcpProxy;
  let h: Harness;

  beforeAll(async () => {
    proxy = await startTcpProxy('127.0.0.1', Number(new URL(TEST_REDIS_URL).port || 6379));
    h = await startHarness({
      REDIS_URL: proxy.url('redis'),
      REDIS_COMMAND_TIMEOUT_MS: String(COMMAND_TIMEOUT_MS),
    });
  });

  afterAll(async () => {
    proxy.release();
    await h.close();
    await proxy.close();
  });

  it('a partner request and an SDK call answer 503 with Retry-After: 1 within the command timeout', async () => {
    const { key } = await h.tenant();
    proxy.hold();
    try {
      for (const send of [
        () => h.http().get('/v1/levels').set(h.auth(key)),
        () => h.http().get('/api/v1/sdk/links/abcdefgh'),
      ]) {
        const started = Date.now();
        const res = await send().timeout(COMMAND_TIMEOUT_MS + 8000);
        const tookMs = Date.now() - started;
        expect({ status: res.status, retryAfter: res.headers['retry-after'], body: res.body }).toEqual({
          status: 503,
          retryAfter: '1',
          body: { message: 'Service temporarily unavailable; retry with back-off' },
        });
        expect(tookMs).toBeLessThan(COMMAND_TIMEOUT_MS + SLACK_MS);
      }
    } finally {
      proxy.release();
    }
    await h.http().get('/v1/levels').set(h.auth(key)).expect(200);
  }, 30_000);
});
