import { loadEnv } from './env';

const valid = {
  DATABASE_URL: 'postgres://postgres@127.0.0.1/tessera',
  REDIS_URL: 'redis://127.0.0.1:6379',
  SECRETS_MASTER_KEY: Buffer.alloc(32, 7).toString('base64'),
};

describe('verification env: HTTP_REQUEST_TIMEOUT_MS (decision 0499)', () => {
  it('is 15 minutes unless set: the hosted page uploads videos of up to 100 MB', () => {
    expect(loadEnv(valid).HTTP_REQUEST_TIMEOUT_MS).toBe(900_000);
    expect(loadEnv({ ...valid, HTTP_REQUEST_TIMEOUT_MS: '120000' }).HTTP_REQUEST_TIMEOUT_MS).toBe(120_000);
  });

  it('stops the boot for a bound under a second', () => {
    expect(() => loadEnv({ ...valid, HTTP_REQUEST_TIMEOUT_MS: '999' })).toThrow(/HTTP_REQUEST_TIMEOUT_MS/);
  });
});
