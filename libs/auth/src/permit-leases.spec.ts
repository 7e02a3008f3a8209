import Redis from 'ioredis';
import { randomBytes } from 'node:crypto';
import { PermitLeases } from './permit-leases';
import { RateLimiter } from './rate-limiter';

const redis = new Redis(process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379');
const prefix = `t-pl-${randomBytes(4).toString('hex')}`;
const limiter = new RateLimiter(redis, prefix);
const MINUTE = { windowSeconds: 60, segments: 6 };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A real limiter whose round trips to Redis are counted. */
function countingLimiter() {
  const counted = new RateLimiter(redis, prefix);
  const calls = { take: 0, handBack: 0 };
  const take = counted.take.bind(counted);
  const handBack = counted.handBack.bind(counted);
  counted.take = (...args) => (calls.take++, take(...args));
  counted.handBack = (...args) => (calls.handBack++, handBack(...args));
  return { counted, calls };
}

/** One request as the service makes it: a held permit if there is one, else a round trip. */
async function request(leases: PermitLeases, bucket: string): Promise<boolean> {
  if (leases.tryLocal(bucket)) return true;
  return (await leases.take(bucket, 1)).admitted === 1;
}

/** What the window still has room for, without counting anything. */
async function room(bucket: string, limit: number): Promise<number> {
  return (await limiter.take(bucket, { limit, ...MINUTE }, 0)).remaining;
}

const leasesOpen: PermitLeases[] = [];
const open = (...args: ConstructorParameters<typeof PermitLeases>) => {
  const l = new PermitLeases(...args);
  leasesOpen.push(l);
  return l;
};

afterAll(async () => {
  await Promise.all(leasesOpen.map((l) => l.close()));
  const keys = await redis.keys(`${prefix}:*`);
  if (keys.length) await redis.del(...keys);
  redis.disconnect();
});

describe('PermitLeases (real Redis)', () => {
  it('a busy bucket in one process admits exactly its limit, with far fewer round trips than requests', async () => {
    const { counted, calls } = countingLimiter();
    const leases = open(counted, { limit: 200, ...MINUTE }, { maxShare: 0.1, leaseMs: 5_000 });
    const admitted: boolean[] = [];
    for (let i = 0; i < 220; i++) admitted.push(await request(leases, 'busy'));
    expect(admitted.slice(0, 200).every(Boolean)).toBe(true);
    expect(admitted.slice(200).some(Boolean)).toBe(false);
    expect(calls.take).toBeLessThan(60);
    expect(await room('busy', 200)).toBe(0);
  });

  it('a refused request gets the window’s Retry-After, as without leases', async () => {
    const leases = open(limiter, { limit: 3, ...MINUTE });
    for (let i = 0; i < 3; i++) expect((await leases.take('small', 1)).admitted).toBe(1);
    const refused = await leases.take('small', 1);
    expect(refused.admitted).toBe(0);
    expect(refused.retryAfterSeconds).toBeGreaterThanOrEqual(1);
    expect(refused.retryAfterSeconds).toBeLessThanOrEqual(60);
  });

  it('an idle bucket takes nothing ahead: one request counts one', async () => {
    const leases = open(limiter, { limit: 1_000, ...MINUTE });
    expect(await request(leases, 'idle')).toBe(true);
    expect(await room('idle', 1_000)).toBe(999);
    await sleep(120); // longer than two leases: the bucket is no longer busy
    expect(await request(leases, 'idle')).toBe(true);
    expect(await room('idle', 1_000)).toBe(998);
  });

  it('one process under concurrent load admits exactly its limit: permits taken ahead serve the refused', async () => {
    const leases = open(limiter, { limit: 150, ...MINUTE }, { maxShare: 0.2 });
    const streams = await Promise.all(
      Array.from({ length: 20 }, async () => {
        let n = 0;
        for (let i = 0; i < 10; i++) if (await request(leases, 'one-process')) n++;
        return n;
      }),
    );
    expect(streams.reduce((s, n) => s + n, 0)).toBe(150);
  });

  it('two processes under concurrent load never admit more than the limit together', async () => {
    const a = open(limiter, { limit: 150, ...MINUTE }, { maxShare: 0.2 });
    const b = open(limiter, { limit: 150, ...MINUTE }, { maxShare: 0.2 });
    const load = (leases: PermitLeases) =>
      Promise.all(
        Array.from({ length: 10 }, async () => {
          let n = 0;
          for (let i = 0; i < 25; i++) if (await request(leases, 'shared')) n++;
          return n;
        }),
      );
    const [fromA, fromB] = await Promise.all([load(a), load(b)]);
    const total = [...fromA, ...fromB].reduce((s, n) => s + n, 0);
    expect(total).toBeLessThanOrEqual(150);
    // Once both have handed back what they held, the window is full to the permit.
    await Promise.all([a.close(), b.close()]);
    expect(total + (await room('shared', 150))).toBe(150);
  });

  it('permits another process holds come back within a lease or two', async () => {
    const { counted, calls } = countingLimiter();
    // The lease is long enough that no permit expires before the sleep below, however slow the machine
    // (with 50 ms, a sweep in the middle of B's requests handed permits to B and made the sums timing-bound).
    const leaseMs = 2_000;
    const a = open(counted, { limit: 40, ...MINUTE }, { maxShare: 0.5, leaseMs });
    const b = open(limiter, { limit: 40, ...MINUTE });
    let servedByA = 0;
    // Eleven requests, one at a time: the eleventh takes four permits ahead (the ten before used theirs).
    for (let i = 0; i < 11; i++) if (await request(a, 'handback')) servedByA++;
    const held = 40 - servedByA - (await room('handback', 40));
    expect(held).toBe(4);
    let servedByB = 0;
    while (await request(b, 'handback')) servedByB++;
    expect(servedByA + servedByB + held).toBe(40);
    expect(calls.handBack).toBe(0);
    await sleep(3 * leaseMs); // expired after one lease, swept within the next
    expect(calls.handBack).toBeGreaterThan(0);
    while (await request(b, 'handback')) servedByB++;
    expect(servedByA + servedByB).toBe(40);
  });

  it('close hands back what is held', async () => {
    const leases = open(limiter, { limit: 100, ...MINUTE }, { maxShare: 0.5, leaseMs: 10_000 });
    for (let i = 0; i < 8; i++) await request(leases, 'close');
    expect(await room('close', 100)).toBeLessThan(92);
    await leases.close();
    expect(await room('close', 100)).toBe(92);
  });
});
