import {
  expectPromptUnavailable,
  HANG_COMMAND_TIMEOUT_MS as COMMAND_TIMEOUT_MS,
  type TcpProxy,
  testRedisProxy,
} from '@tessera/testing';
import { type Harness, startHarness } from './harness';

/**
 * A Redis that hangs while the API runs (decision 0484): the test proxy is held, as in decision 0478's shutdown
 * case. A partner request counts against its credential's limit, a hosted-SDK call against its client IP: both in
 * Redis, so both answer the contract's 503 within the command timeout instead of waiting for ever.
 */
describe('verification-api while Redis hangs', () => {
  let proxy: TcpProxy;
  let h: Harness;

  beforeAll(async () => {
    proxy = await testRedisProxy();
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
        await expectPromptUnavailable(send);
      }
    } finally {
      proxy.release();
    }
    await h.http().get('/v1/levels').set(h.auth(key)).expect(200);
  }, 30_000);
});
