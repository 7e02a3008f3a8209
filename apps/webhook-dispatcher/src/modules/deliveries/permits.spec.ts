import { Permits } from './permits';

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
