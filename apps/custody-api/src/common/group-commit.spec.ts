import { setTimeout as sleep } from 'node:timers/promises';
import { GroupCommit } from './group-commit';

interface Item {
  id: number;
  key?: string;
  bad?: boolean;
}

function recorder(delayMs = 5) {
  const batches: number[][] = [];
  const write = async (items: Item[]) => {
    batches.push(items.map((i) => i.id));
    await sleep(delayMs);
    if (items.some((i) => i.bad)) throw new Error(`bad item in ${items.map((i) => i.id).join(',')}`);
    return items.map((i) => `done ${i.id}`);
  };
  return { batches, write };
}

describe('GroupCommit', () => {
  it('writes items submitted together in one batch and answers each caller with its own outcome', async () => {
    const { batches, write } = recorder();
    const commit = new GroupCommit(write, { maxBatch: 100 });
    const outcomes = await Promise.all([1, 2, 3].map((id) => commit.submit({ id })));
    expect(outcomes).toEqual(['done 1', 'done 2', 'done 3']);
    expect(batches).toEqual([[1, 2, 3]]);
  });

  it('collects items arriving while a batch is in flight into the next batch, one batch at a time', async () => {
    const { batches, write } = recorder(20);
    const commit = new GroupCommit(write, { maxBatch: 100 });
    const first = commit.submit({ id: 1 });
    await sleep(5); // batch [1] is now in flight
    const rest = [2, 3, 4].map((id) => commit.submit({ id }));
    await Promise.all([first, ...rest]);
    expect(batches).toEqual([[1], [2, 3, 4]]);
  });

  it('never puts more than maxBatch items in one batch', async () => {
    const { batches, write } = recorder(1);
    const commit = new GroupCommit(write, { maxBatch: 2 });
    await Promise.all([1, 2, 3, 4, 5].map((id) => commit.submit({ id })));
    expect(batches).toEqual([[1, 2], [3, 4], [5]]);
  });

  it('keeps items with the same conflict key in separate batches, in submission order', async () => {
    const { batches, write } = recorder(1);
    const commit = new GroupCommit(write, { maxBatch: 100, conflictKey: (i: Item) => i.key });
    await Promise.all(
      [{ id: 1, key: 'a' }, { id: 2, key: 'a' }, { id: 3, key: 'b' }, { id: 4 }, { id: 5, key: 'a' }].map(
        (item) => commit.submit(item),
      ),
    );
    expect(batches).toEqual([[1, 3, 4], [2], [5]]);
  });

  it('retries each item alone when a batch fails, so only the bad item is rejected', async () => {
    const { batches, write } = recorder(1);
    const commit = new GroupCommit(write, { maxBatch: 100 });
    const results = await Promise.allSettled(
      [{ id: 1 }, { id: 2, bad: true }, { id: 3 }].map((item) => commit.submit(item)),
    );
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect((results[1] as PromiseRejectedResult).reason.message).toBe('bad item in 2');
    expect(batches).toEqual([[1, 2, 3], [1], [2], [3]]);
  });

  it('keeps serving after a failure', async () => {
    const { write } = recorder(1);
    const commit = new GroupCommit(write, { maxBatch: 100 });
    await expect(commit.submit({ id: 1, bad: true })).rejects.toThrow('bad item in 1');
    await expect(commit.submit({ id: 2 })).resolves.toBe('done 2');
  });

  it('with maxInFlight 2, a second batch is written while the first is in flight', async () => {
    let active = 0;
    let peak = 0;
    const batches: number[][] = [];
    const commit = new GroupCommit(
      async (items: Item[]) => {
        batches.push(items.map((i) => i.id));
        peak = Math.max(peak, ++active);
        await sleep(20);
        active--;
        return items.map((i) => i.id);
      },
      { maxBatch: 100, maxInFlight: 2, conflictKey: (i: Item) => i.key },
    );
    const first = commit.submit({ id: 1, key: 'a' });
    await sleep(5);
    // 2 shares key a with the batch in flight: it waits; 3 goes out at once in a second batch.
    const rest = [commit.submit({ id: 2, key: 'a' }), commit.submit({ id: 3, key: 'b' })];
    await Promise.all([first, ...rest]);
    expect(peak).toBe(2);
    expect(batches).toEqual([[1], [3], [2]]);
  });
});
