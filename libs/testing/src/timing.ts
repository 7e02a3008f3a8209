/**
 * Compares the cost of two operations statistically: `batches` interleaved rounds (a, b, b, a, …, so drift
 * in machine load hits both alike), each timing `perBatch` calls, and answers the ratio of the medians
 * (a / b). Used by unit tests of authentication guards to show two failure paths cost the same; it is a
 * ratio of medians, robust to the noise of a shared machine, never an absolute time.
 */
export async function medianCostRatio(
  a: () => unknown,
  b: () => unknown,
  opts: { batches?: number; perBatch?: number } = {},
): Promise<{ ratio: number; medianA: number; medianB: number }> {
  const batches = opts.batches ?? 101;
  const perBatch = opts.perBatch ?? 20;
  const time = async (fn: () => unknown) => {
    const started = process.hrtime.bigint();
    for (let i = 0; i < perBatch; i++) await fn();
    return Number(process.hrtime.bigint() - started) / perBatch;
  };
  const as: number[] = [];
  const bs: number[] = [];
  for (let i = 0; i < 5; i++) {
    await time(a);
    await time(b);
  }
  for (let i = 0; i < batches; i++) {
    if (i % 2 === 0) {
      as.push(await time(a));
      bs.push(await time(b));
    } else {
      bs.push(await time(b));
      as.push(await time(a));
    }
  }
  const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)]!;
  const medianA = median(as);
  const medianB = median(bs);
  return { ratio: medianA / medianB, medianA, medianB };
}
