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

  /** Acquires for `key` in the background, pushing `key` onto `order` once granted. */
  const queue = (permits: EndpointPermits, key: string, order: string[]) => {
    const held: (() => void)[] = [];
    void permits.acquire(key).then((release) => {
      order.push(key);
      held.push(release!);
    });
    return held;
  };
  const take = async (permits: EndpointPermits, key: string, n: number) => {
    const releases: (() => void)[] = [];
    for (let i = 0; i < n; i++) releases.push((await permits.acquire(key, 0))!);
    return releases;
  };

  it('lets one key alone hold its whole share, and no more', async () => {
    const permits = new EndpointPermits(8, 6, 1000);
    const order: string[] = [];
    const a = await take(permits, 'a', 6);
    expect(a.every((release) => typeof release === 'function')).toBe(true);
    queue(permits, 'a', order);
    await tick();
    expect(order).toEqual([]); // at its share, with two permits still free
    a[0]!();
    await tick();
    expect(order).toEqual(['a']);
    // A share of the whole (the operator lifted it) is every permit.
    const all = new EndpointPermits(4, 4, 1000);
    expect(await take(all, 'a', 4)).toHaveLength(4);
  });

  it('keeps the last permits for the keys that hold fewest: a third key finds one while two hold the rest', async () => {
    const permits = new EndpointPermits(8, 6, 1000);
    const order: string[] = [];
    await take(permits, 'slow-a', 6);
    queue(permits, 'slow-a', order);
    // The second key takes one of the two left (not both: more than it holds must stay free) ...
    await take(permits, 'slow-b', 1);
    queue(permits, 'slow-b', order);
    await tick();
    expect(order).toEqual([]);
    // ... so a third finds the last one at once, without waiting for the first two.
    expect(await permits.acquire('healthy', 0)).toBeInstanceOf(Function);
    expect(permits.queued).toBe(2);
  });

  it('with the defaults (64 permits, a share of 48), two slow endpoints leave permits to a healthy one', async () => {
    const permits = new EndpointPermits(64, 48, 1000);
    const greedy = async (key: string) => {
      let n = 0;
      while (await permits.acquire(key, 0)) n++;
      return n;
    };
    expect(await greedy('slow-a')).toBe(48);
    // Before decision 0472 the second took the other 16 and a healthy endpoint found none.
    expect(await greedy('slow-b')).toBe(8);
    expect(await greedy('healthy')).toBe(4);
    expect(await greedy('slow-c')).toBe(2);
  });

  it('gives a newcomer one of the free permits at once, and half of them at most', async () => {
    const permits = new EndpointPermits(4, 2, 1000);
    const slowA = (await permits.acquire('slow'))!;
    await permits.acquire('slow');
    const order: string[] = [];
    queue(permits, 'slow', order);
    await tick();
    expect(order).toEqual([]); // the slow key is at its share, with two permits still free
    // The other keys are not queued behind the slow one: each finds a permit.
    expect(await permits.acquire('fast', 0)).toBeInstanceOf(Function);
    queue(permits, 'fast', order);
    const other = (await permits.acquire('other', 0))!;
    expect(other).toBeInstanceOf(Function);
    slowA();
    await tick();
    // slow and fast hold one each, and one permit is free: more than a taker holds must stay free.
    expect(order).toEqual([]);
    other();
    await tick();
    // Two free: the tie between slow and fast goes to the waiter that came first; the last one stays free.
    expect(order).toEqual(['slow']);
  });

  it('hands a freed permit to the waiting key that holds the fewest, not to the earliest waiter', async () => {
    const permits = new EndpointPermits(8, 6, 1000);
    const order: string[] = [];
    const a = await take(permits, 'a', 6);
    queue(permits, 'a', order); // waits first, holding six
    await take(permits, 'b', 1);
    queue(permits, 'b', order); // holding one
    await take(permits, 'c', 1);
    queue(permits, 'c', order); // holding one, after b
    queue(permits, 'd', order); // holding none, last
    await tick();
    expect(order).toEqual([]);
    a[0]!();
    await tick();
    expect(order).toEqual(['d']); // before decision 0472: 'a', the earliest waiter under its share
    a[1]!();
    await tick();
    // b and c hold one each and one permit is free: more than either holds must stay free, so it stays.
    expect(order).toEqual(['d']);
    a[2]!();
    await tick();
    expect(order).toEqual(['d', 'b']); // b and c tie; b waited first
    a[3]!();
    await tick();
    expect(order).toEqual(['d', 'b', 'c']);
  });

  it('lets a key that holds the most make progress: once it holds no more than the others, its older waiter wins', async () => {
    const permits = new EndpointPermits(2, 2, 1000);
    const order: string[] = [];
    const slow = await take(permits, 'slow', 2);
    queue(permits, 'slow', order);
    const fast = queue(permits, 'fast', order);
    queue(permits, 'fast', order);
    queue(permits, 'fast', order);
    await tick();
    slow[0]!();
    await tick();
    expect(order).toEqual(['fast']); // fast holds none, slow one: fast's later waiter wins
    fast[0]!();
    await tick();
    expect(order).toEqual(['fast', 'fast']); // fast holds none again, slow still one
    slow[1]!();
    await tick();
    // Now slow holds none and fast one: slow's waiter, the oldest, gets the permit before fast's third.
    expect(order).toEqual(['fast', 'fast', 'slow']);
    expect(permits.queued).toBe(1);
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
