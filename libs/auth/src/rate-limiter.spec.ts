import Redis from 'ioredis';
import { randomBytes } from 'node:crypto';
import { RateLimiter } from './rate-limiter';

const redis = new Redis(process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379');
const prefix = `t-rl-${randomBytes(4).toString('hex')}`;
const limiter = new RateLimiter(redis, prefix);

afterAll(async () => {
  const keys = await redis.keys(`${prefix}:*`);
  if (keys.length) await redis.del(...keys);
  redis.disconnect();
});

describe('RateLimiter (real Redis)', () => {
  it('allows exactly `limit` requests in a window, then refuses with a whole-second Retry-After', async () => {
    const rule = { limit: 5, windowSeconds: 60, segments: 4 };
    const results = [];
    for (let i = 0; i < 7; i++) results.push(await limiter.consume('bucket-a', rule));
    expect(results.map((r) => r.allowed)).toEqual([true, true, true, true, true, false, false]);
    expect(results[4].remaining).toBe(0);
    const refused = results[5];
    expect(Number.isInteger(refused.retryAfterSeconds)).toBe(true);
    expect(refused.retryAfterSeconds).toBeGreaterThanOrEqual(1);
    expect(refused.retryAfterSeconds).toBeLessThanOrEqual(60);
  });

  it('is atomic under concurrency: 100 parallel calls against a limit of 20 admit exactly 20', async () => {
    const rule = { limit: 20, windowSeconds: 60, segments: 4 };
    const results = await Promise.all(Array.from({ length: 100 }, () => limiter.consume('bucket-b', rule)));
    expect(results.filter((r) => r.allowed)).toHaveLength(20);
  });

  it('take counts several requests at once and admits only what still fits', async () => {
    const rule = { limit: 10, windowSeconds: 60, segments: 4 };
    expect(await limiter.take('bucket-f', rule, 7)).toEqual({
      admitted: 7,
      remaining: 3,
      retryAfterSeconds: 0,
      segment: expect.any(Number),
    });
    const partly = await limiter.take('bucket-f', rule, 5);
    expect(partly.admitted).toBe(3);
    expect(partly.remaining).toBe(0);
    expect(partly.retryAfterSeconds).toBeGreaterThanOrEqual(1);
    expect(partly.retryAfterSeconds).toBeLessThanOrEqual(60);
    const none = await limiter.take('bucket-f', rule, 2);
    expect(none.admitted).toBe(0);
    expect(none.retryAfterSeconds).toBeGreaterThanOrEqual(1);
    expect((await limiter.consume('bucket-f', rule)).allowed).toBe(false);
  });

  it('concurrent takes never admit more than the limit in total', async () => {
    const rule = { limit: 25, windowSeconds: 60, segments: 4 };
    const takes = await Promise.all(Array.from({ length: 20 }, () => limiter.take('bucket-g', rule, 3)));
    expect(takes.reduce((sum, t) => sum + t.admitted, 0)).toBe(25);
  });

  it('handBack uncounts permits in the segment they were taken in, never below zero', async () => {
    const rule = { limit: 10, windowSeconds: 60, segments: 4 };
    const taken = await limiter.take('bucket-h', rule, 6);
    expect(Math.abs(taken.segment - Math.floor(Date.now() / 15_000))).toBeLessThanOrEqual(1);
    expect(await limiter.handBack('bucket-h', taken.segment, 4)).toBe(4);
    expect((await limiter.take('bucket-h', rule, 0)).remaining).toBe(8);
    expect(await limiter.handBack('bucket-h', taken.segment, 5)).toBe(2);
    expect((await limiter.take('bucket-h', rule, 0)).remaining).toBe(10);
    expect(await limiter.handBack('bucket-h', taken.segment - 100, 1)).toBe(0);
  });

  it('keeps buckets apart', async () => {
    const rule = { limit: 1, windowSeconds: 60, segments: 4 };
    expect((await limiter.consume('bucket-c', rule)).allowed).toBe(true);
    expect((await limiter.consume('bucket-d', rule)).allowed).toBe(true);
    expect((await limiter.consume('bucket-c', rule)).allowed).toBe(false);
  });

  it('slides: capacity returns once the oldest segment leaves the window', async () => {
    const rule = { limit: 2, windowSeconds: 2, segments: 2 };
    expect((await limiter.consume('bucket-e', rule)).allowed).toBe(true);
    expect((await limiter.consume('bucket-e', rule)).allowed).toBe(true);
    const refused = await limiter.consume('bucket-e', rule);
    expect(refused.allowed).toBe(false);
    await new Promise((r) => setTimeout(r, refused.retryAfterSeconds * 1000 + 50));
    expect((await limiter.consume('bucket-e', rule)).allowed).toBe(true);
  });
});
