import { EndpointPermits, Permits } from './permits';

describe('Permits', () => {
  it('lets at most `size` holders in, and the next waiter in arrival order when one leaves', async () => {
    const permits = new Permits(2);
    const order: number[] = [];
    const a = await permits.acquire();
    const b = await permits.acquire();
    const third = permits.acquire().then((release) => {
      order.push(3);
      return release;
    });
    const fourth = permits.acquire().then((release) => {
      order.push(4);
      return release;
    });
    await new Promise((r) => setImmediate(r));
    expect(order).toEqual([]);
    expect(permits.queued).toBe(2);
    a();
    a(); // a second release of the same permit changes nothing
    await new Promise((r) => setImmediate(r));
    expect(order).toEqual([3]);
    b();
    await fourth;
    expect(order).toEqual([3, 4]);
    (await third)();
    (await fourth)();
    // Both permits are free again.
    await permits.acquire();
    await permits.acquire();
    expect(permits.queued).toBe(0);
  });

  it('refuses a size below one', () => {
    expect(() => new Permits(0)).toThrow(/positive integer/);
  });
});

describe('EndpointPermits', () => {
  const tick = () => new Promise((r) => setImmediate(r));

  it('lets one key hold at most its share, and gives the rest to the other keys at once', async () => {
    const permits = new EndpointPermits(4, 2, 1000);
    const slowA = (await permits.acquire('slow'))!;
    await permits.acquire('slow');
    let third: (() => void) | null = null;
    void permits.acquire('slow').then((release) => (third = release));
    await tick();
    expect(third).toBeNull(); // the slow key is at its share, with two permits still free
    // The other key is not queued behind the slow one.
    const fast1 = await permits.acquire('fast');
    const fast2 = await permits.acquire('fast');
    expect(fast1).toBeInstanceOf(Function);
    expect(fast2).toBeInstanceOf(Function);
    slowA();
    await tick();
    expect(third).toBeInstanceOf(Function);
  });

  it('hands a freed permit to the earliest waiter among the keys under their share', async () => {
    const permits = new EndpointPermits(2, 2, 1000);
    const first = (await permits.acquire('a'))!;
    await permits.acquire('a');
    const order: string[] = [];
    void permits.acquire('a').then(() => order.push('a'));
    void permits.acquire('b').then(() => order.push('b'));
    await tick();
    first();
    await tick();
    // The release left 'a' under its share again, and 'a' waited first: it gets the permit, 'b' waits on.
    expect(order).toEqual(['a']);
  });

  it('skips a key at its share when handing on a permit', async () => {
    const permits = new EndpointPermits(3, 2, 1000);
    await permits.acquire('a');
    await permits.acquire('a');
    const c = (await permits.acquire('c'))!;
    const order: string[] = [];
    void permits.acquire('a').then(() => order.push('a')); // a is at its share
    void permits.acquire('b').then(() => order.push('b')); // no permit free
    await tick();
    c();
    await tick();
    expect(order).toEqual(['b']);
  });

  it('gives up after maxWaitMs and says when a key has been waiting too long', async () => {
    const permits = new EndpointPermits(1, 1, 50);
    const held = (await permits.acquire('a'))!;
    const t0 = performance.now();
    const waiting = permits.acquire('a', 400);
    await tick();
    expect(permits.congested('a')).toBe(false);
    expect(permits.congested('a', performance.now() + 60)).toBe(true);
    expect(permits.congested('b', performance.now() + 60)).toBe(false);
    expect(await waiting).toBeNull();
    expect(performance.now() - t0).toBeGreaterThanOrEqual(390);
    expect(permits.queued).toBe(0);
    expect(permits.congested('a', performance.now() + 60)).toBe(false);
    // The permit that was held still goes back, and the next caller gets it.
    held();
    held();
    expect(await permits.acquire('a', 10)).toBeInstanceOf(Function);
  });

  it('refuses a size or share below one', () => {
    expect(() => new EndpointPermits(0, 1, 1)).toThrow(/positive integers/);
    expect(() => new EndpointPermits(1, 0, 1)).toThrow(/positive integers/);
  });
});
