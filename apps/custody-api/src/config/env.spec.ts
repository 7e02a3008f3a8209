import { loadEnv } from './env';

const valid = {
  DATABASE_URL: 'postgres://postgres@127.0.0.1/tessera',
  REDIS_URL: 'redis://127.0.0.1:6379',
  SECRETS_MASTER_KEY: Buffer.alloc(32, 7).toString('base64'),
};

describe('custody env: TRUSTED_PROXIES', () => {
  it('reads a list of addresses and CIDRs', () => {
    expect(loadEnv({ ...valid, TRUSTED_PROXIES: '127.0.0.1, 10.0.0.0/8,fd00::/8' }).TRUSTED_PROXIES).toEqual([
      '127.0.0.1',
      '10.0.0.0/8',
      'fd00::/8',
    ]);
  });

  it('stops the boot with a bad entry named, as verification-api does', () => {
    expect(() => loadEnv({ ...valid, TRUSTED_PROXIES: '10.0.0.0/8,10.0.0.0/33,proxy' })).toThrow(
      /TRUSTED_PROXIES: 10\.0\.0\.0\/33 has an invalid prefix length.*proxy is not an IP address or CIDR/s,
    );
  });
});

describe('custody env: HTTP_REQUEST_TIMEOUT_MS (decision 0499)', () => {
  it('is 300 s unless set: custody takes no uploads', () => {
    expect(loadEnv(valid).HTTP_REQUEST_TIMEOUT_MS).toBe(300_000);
    expect(loadEnv({ ...valid, HTTP_REQUEST_TIMEOUT_MS: '60000' }).HTTP_REQUEST_TIMEOUT_MS).toBe(60_000);
  });

  it('stops the boot for no bound or one past an hour', () => {
    expect(() => loadEnv({ ...valid, HTTP_REQUEST_TIMEOUT_MS: '0' })).toThrow(/HTTP_REQUEST_TIMEOUT_MS/);
    expect(() => loadEnv({ ...valid, HTTP_REQUEST_TIMEOUT_MS: '3600001' })).toThrow(
      /HTTP_REQUEST_TIMEOUT_MS/,
    );
  });
});
