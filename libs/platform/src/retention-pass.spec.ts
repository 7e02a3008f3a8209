import { RetentionPass } from './retention-pass';

/** A table of `rows` expired rows; each statement deletes up to its limit. */
function table(rows: number) {
  const calls: number[] = [];
  return {
    calls,
    left: () => rows,
    deleteBatch: async (limit: number) => {
      calls.push(limit);
      const n = Math.min(limit, rows);
      rows -= n;
      return n;
    },
  };
}

const quiet = { everyMs: 10, onDeleted: () => undefined, onError: () => undefined };

describe('RetentionPass', () => {
  it('deletes in statements of `batch` rows until one comes back short, and reports the total', async () => {
    const t = table(12);
    const deleted: number[] = [];
    const pass = new RetentionPass({
      ...quiet,
      deleteBatch: t.deleteBatch,
      batch: 5,
      onDeleted: (n) => deleted.push(n),
    });
    expect(await pass.run()).toBe(12);
    expect(t.calls).toEqual([5, 5, 5]);
    expect(await pass.run()).toBe(0);
    // onDeleted only for a pass that deleted something.
    expect(deleted).toEqual([12]);
  });

  it('a whole last batch takes one more statement, which finds nothing', async () => {
    const t = table(10);
    const pass = new RetentionPass({ ...quiet, deleteBatch: t.deleteBatch, batch: 5 });
    expect(await pass.run()).toBe(10);
    expect(t.calls).toEqual([5, 5, 5]);
  });

  it('once stopped, a pass in progress ends after its current statement, and stop waits for it', async () => {
    const t = table(100);
    let stopping: Promise<void> | undefined;
    const pass: RetentionPass = new RetentionPass({
      ...quiet,
      batch: 10,
      deleteBatch: async (limit) => {
        const n = await t.deleteBatch(limit);
        if (t.calls.length === 2) stopping = pass.stop();
        return n;
      },
    });
    expect(await pass.run()).toBe(20);
    await stopping;
    expect(t.left()).toBe(80);
  });

  it('runs a pass every interval; a failed pass is reported and the next one still runs', async () => {
    const errors: string[] = [];
    let passes = 0;
    const pass = new RetentionPass({
      ...quiet,
      batch: 10,
      deleteBatch: async () => {
        passes += 1;
        if (passes === 1) throw new Error('database gone');
        return 0;
      },
      onError: (err) => errors.push(err.message),
    });
    pass.start();
    const deadline = Date.now() + 2000;
    while (passes < 3 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
    await pass.stop();
    expect(errors).toEqual(['database gone']);
    expect(passes).toBeGreaterThanOrEqual(3);
    const after = passes;
    await new Promise((r) => setTimeout(r, 50));
    expect(passes).toBe(after);
  });
});
