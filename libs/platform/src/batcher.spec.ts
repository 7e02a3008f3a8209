import { Batcher } from './batcher';

/** A `run` whose batches stay open until the test releases them, recording what each batch held. */
function controlledRun<I, R>(answer: (items: I[]) => (R | Error)[] | Promise<(R | Error)[]>) {
  const batches: I[][] = [];
  const releases: (() => void)[] = [];
  const run = async (items: I[]) => {
    batches.push(items);
    await new Promise<void>((resolve) => releases.push(resolve));
    return answer(items);
  };
  const releaseNext = async () => {
    while (releases.length === 0) await new Promise((r) => setImmediate(r));
    releases.shift()?.();
  };
  return { run, batches, releaseNext };
}

const settle = <T>(promises: Promise<T>[]) => Promise.allSettled(promises);

describe('Batcher', () => {
  it('sends everything submitted in one turn as one batch, each caller getting its own result', async () => {
    const { run, batches, releaseNext } = controlledRun((items: number[]) => items.map((n) => n * 10));
    const batcher = new Batcher({ run });
    const results = [1, 2, 3].map((n) => batcher.submit(n));
    await releaseNext();
    expect(await Promise.all(results)).toEqual([10, 20, 30]);
    expect(batches).toEqual([[1, 2, 3]]);
  });

  it('queues what arrives while a batch is in flight and sends it as the next batch', async () => {
    const { run, batches, releaseNext } = controlledRun((items: string[]) =>
      items.map((s) => s.toUpperCase()),
    );
    const batcher = new Batcher({ run });
    const first = batcher.submit('a');
    await new Promise((r) => setImmediate(r));
    expect(batches).toEqual([['a']]);
    const later = ['b', 'c', 'd'].map((s) => batcher.submit(s));
    await new Promise((r) => setImmediate(r));
    expect(batches).toHaveLength(1);
    expect(batcher.pending).toBe(3);
    await releaseNext();
    expect(await first).toBe('A');
    await releaseNext();
    expect(await Promise.all(later)).toEqual(['B', 'C', 'D']);
    expect(batches).toEqual([['a'], ['b', 'c', 'd']]);
  });

  it('caps a batch at maxBatchSize and runs up to maxConcurrentBatches at once', async () => {
    const { run, batches, releaseNext } = controlledRun((items: number[]) => items);
    const batcher = new Batcher({ run, maxBatchSize: 2, maxConcurrentBatches: 2 });
    const results = [1, 2, 3, 4, 5].map((n) => batcher.submit(n));
    await new Promise((r) => setImmediate(r));
    expect(batches).toEqual([
      [1, 2],
      [3, 4],
    ]);
    await releaseNext();
    await releaseNext();
    await releaseNext();
    expect(await Promise.all(results)).toEqual([1, 2, 3, 4, 5]);
    expect(batches).toEqual([[1, 2], [3, 4], [5]]);
  });

  it('an Error result fails only its own caller', async () => {
    const { run, releaseNext } = controlledRun((items: number[]) =>
      items.map((n) => (n === 2 ? new Error('two is bad') : n)),
    );
    const batcher = new Batcher({ run });
    const results = settle([1, 2, 3].map((n) => batcher.submit(n)));
    await releaseNext();
    expect(await results).toEqual([
      { status: 'fulfilled', value: 1 },
      { status: 'rejected', reason: new Error('two is bad') },
      { status: 'fulfilled', value: 3 },
    ]);
  });

  it('a failing batch rejects every caller waiting on it, and the next batch still runs', async () => {
    const down = new Error('connection terminated');
    let fail = true;
    const { run, batches, releaseNext } = controlledRun((items: number[]) => {
      if (fail) throw down;
      return items;
    });
    const batcher = new Batcher({ run, retryAlone: () => false });
    const doomed = settle([1, 2, 3].map((n) => batcher.submit(n)));
    await new Promise((r) => setImmediate(r));
    const next = batcher.submit(4);
    await releaseNext();
    expect((await doomed).map((r) => r.status === 'rejected' && r.reason)).toEqual([down, down, down]);
    fail = false;
    await releaseNext();
    expect(await next).toBe(4);
    expect(batches).toEqual([[1, 2, 3], [4]]);
  });

  it('with retryAlone, a batch that throws for one bad item is rerun item by item', async () => {
    const bad = Object.assign(new Error('invalid byte sequence'), { code: '22021' });
    const batches: string[][] = [];
    const batcher = new Batcher<string, string>({
      run: async (items) => {
        batches.push(items);
        if (items.includes('bad')) throw bad;
        return items.map((s) => `ok:${s}`);
      },
      retryAlone: (error) => (error as { code?: string }).code?.startsWith('22') ?? false,
    });
    const results = await settle(['a', 'bad', 'b'].map((s) => batcher.submit(s)));
    expect(results).toEqual([
      { status: 'fulfilled', value: 'ok:a' },
      { status: 'rejected', reason: bad },
      { status: 'fulfilled', value: 'ok:b' },
    ]);
    expect(batches).toEqual([['a', 'bad', 'b'], ['a'], ['bad'], ['b']]);
  });

  it('rejects every caller when run answers the wrong number of results', async () => {
    const batcher = new Batcher<number, number>({ run: async () => [1] });
    const results = await settle([1, 2].map((n) => batcher.submit(n)));
    expect(results.every((r) => r.status === 'rejected')).toBe(true);
    expect((results[0] as PromiseRejectedResult).reason.message).toMatch(/1 results for 2 items/);
  });

  it('never puts two items with one conflict key in flight at once, keeping their order', async () => {
    type Item = { id: number; key?: string };
    const batches: number[][] = [];
    let active = 0;
    let peak = 0;
    // The first batch stays in flight until the test lets it go, however slow the machine.
    let releaseFirst!: () => void;
    const firstHeld = new Promise<void>((r) => (releaseFirst = r));
    const batcher = new Batcher<Item, number>({
      run: async (items) => {
        batches.push(items.map((i) => i.id));
        peak = Math.max(peak, ++active);
        await (items[0]!.id === 1 ? firstHeld : new Promise((r) => setTimeout(r, 10)));
        active -= 1;
        return items.map((i) => i.id);
      },
      maxConcurrentBatches: 2,
      conflictKey: (i) => i.key,
    });
    const first = batcher.submit({ id: 1, key: 'a' });
    await new Promise((r) => setImmediate(r));
    // 2 and 4 share key a with the batch in flight: they wait; 3 and 5 go out at once in a second batch.
    const rest = [
      batcher.submit({ id: 2, key: 'a' }),
      batcher.submit({ id: 3, key: 'b' }),
      batcher.submit({ id: 4, key: 'a' }),
      batcher.submit({ id: 5 }),
    ];
    for (let i = 0; i < 200 && batches.length < 2; i++) await new Promise((r) => setTimeout(r, 5));
    expect(batches).toEqual([[1], [3, 5]]);
    releaseFirst();
    expect(await Promise.all([first, ...rest])).toEqual([1, 2, 3, 4, 5]);
    expect(peak).toBe(2);
    expect(batches).toEqual([[1], [3, 5], [2], [4]]);
  });
});
