import { backoffDelayMs, resolveRetryOptions, retryAfterMs } from './retry-policy';

describe('retry policy', () => {
  const options = resolveRetryOptions();

  it('backs off about 1, 2, 4, 8 s and never past 30 s', () => {
    const mid = () => 0.5;
    expect([1, 2, 3, 4, 5, 6, 7].map((n) => backoffDelayMs(n, options, mid))).toEqual([
      1000, 2000, 4000, 8000, 16000, 30000, 30000,
    ]);
    for (let n = 1; n < 12; n++) {
      expect(backoffDelayMs(n, options, () => 0.999999)).toBeLessThanOrEqual(30_000);
      expect(backoffDelayMs(n, options, () => 0)).toBeGreaterThanOrEqual(
        Math.min(30_000, 1000 * 2 ** (n - 1)) * 0.8,
      );
    }
  });

  it('reads Retry-After as seconds or an HTTP date, and caps it', () => {
    expect(retryAfterMs('3', 0, 60_000)).toBe(3000);
    expect(retryAfterMs('0', 0, 60_000)).toBe(0);
    expect(retryAfterMs('600', 0, 60_000)).toBe(60_000);
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(retryAfterMs('Thu, 01 Jan 2026 00:00:05 GMT', now, 60_000)).toBe(5000);
    expect(retryAfterMs(null, 0, 60_000)).toBeUndefined();
    expect(retryAfterMs('soon', 0, 60_000)).toBeUndefined();
  });

  it('refuses a nonsensical attempt count', () => {
    expect(() => resolveRetryOptions({ maxAttempts: 0 })).toThrow(TypeError);
  });
});
