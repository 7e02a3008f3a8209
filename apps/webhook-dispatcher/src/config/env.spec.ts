import { ConfigError } from '@tessera/platform';
import { leaseMarginMs, loadEnv } from './env';

const base = {
  DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/tessera',
  REDIS_URL: 'redis://127.0.0.1:6379',
  SECRETS_MASTER_KEY: Buffer.alloc(32, 1).toString('base64'),
};

describe('WEBHOOK_LEASE_MS against WEBHOOK_TIMEOUT_MS (decision 0452)', () => {
  it('accepts the defaults and a lease that just holds the timeout and its margin', () => {
    expect(loadEnv(base)).toMatchObject({ WEBHOOK_LEASE_MS: 30_000, WEBHOOK_TIMEOUT_MS: 5000 });
    for (const [lease, timeout] of [
      [1667, 1500],
      [10_000, 9000],
      [11_000, 10_000],
    ] as const) {
      const env = loadEnv({ ...base, WEBHOOK_LEASE_MS: String(lease), WEBHOOK_TIMEOUT_MS: String(timeout) });
      expect(env.WEBHOOK_LEASE_MS - leaseMarginMs(env.WEBHOOK_LEASE_MS)).toBeGreaterThanOrEqual(timeout);
    }
  });

  it('refuses a lease one millisecond shorter', () => {
    for (const [lease, timeout] of [
      [1666, 1500],
      [9999, 9000],
      [10_999, 10_000],
      [2000, 5000],
    ] as const) {
      expect(() =>
        loadEnv({ ...base, WEBHOOK_LEASE_MS: String(lease), WEBHOOK_TIMEOUT_MS: String(timeout) }),
      ).toThrow(ConfigError);
    }
  });
});
