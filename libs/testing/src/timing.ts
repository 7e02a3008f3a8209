export interface CostRatioOptions {
  /** Interleaved rounds measured (each times one batch of `a` and one of `b`). */
  batches?: number;
  /** Calls timed together in one batch. */
  perBatch?: number;
  /** Rounds run first and thrown away, so both paths are compiled and warm before anything counts. */
  warmup?: number;
  /** The clock, in nanoseconds (a test of this helper passes a simulated one). */
  clock?: () => bigint;
}

export interface CostRatio {
  /** The median, over the rounds, of a round's cost of `a` over its cost of `b` (so ≈ 1 when equal). */
  ratio: number;
  /** Median cost of one call of `a` and of `b`, in nanoseconds (for the failure message). */
  medianA: number;
  medianB: number;
}

/**
 * Compares the cost of two operations statistically: `batches` interleaved rounds (a, b, then b, a, …), each
 * timing `perBatch` calls of `a` and `perBatch` calls of `b` back to back, and answers the MEDIAN OF THE
 * ROUNDS' RATIOS a / b. Used by unit tests of authentication guards to show two failure paths cost the same.
 *
 * Why per-round ratios and not the ratio of the two medians: on a shared machine the noise comes in spells
 * (another process takes the core, a garbage collection marks incrementally) that slow every call for a while.
 * When such spells cover about half the run, each median lands on whichever side of the slow/fast split its
 * 51st value falls, and the ratio of the medians jumps to the spells' slowdown (seen at 0.75 and 1.22 for two
 * equal paths) with no difference in the code. The two batches of a round are timed next to each other, in the
 * same spell almost always, so a round's ratio cancels the spell; the median over the rounds drops the few
 * rounds a spell boundary cut. A real difference (a database round trip or an HMAC one path skips) is in every
 * round and moves the median of the ratios as much as it moved the ratio of the medians.
 */
export async function medianCostRatio(
  a: () => unknown,
  b: () => unknown,
  opts: CostRatioOptions = {},
): Promise<CostRatio> {
  const batches = opts.batches ?? 101;
  const perBatch = opts.perBatch ?? 20;
  const warmup = opts.warmup ?? 20;
  const clock = opts.clock ?? process.hrtime.bigint;
  const time = async (fn: () => unknown) => {
    const started = clock();
    for (let i = 0; i < perBatch; i++) await fn();
    return Number(clock() - started) / perBatch;
  };
  for (let i = 0; i < warmup; i++) {
    await time(a);
    await time(b);
  }
  const as: number[] = [];
  const bs: number[] = [];
  const ratios: number[] = [];
  for (let i = 0; i < batches; i++) {
    let costA: number;
    let costB: number;
    if (i % 2 === 0) {
      costA = await time(a);
      costB = await time(b);
    } else {
      costB = await time(b);
      costA = await time(a);
    }
    as.push(costA);
    bs.push(costB);
    ratios.push(costA / costB);
  }
  return { ratio: median(ratios), medianA: median(as), medianB: median(bs) };
}

/**
 * `medianCostRatio`, measured again (up to `attempts` times in all) while the ratio falls outside
 * `[low, high]`: a measurement a burst of load spoiled is repeated rather than failing the suite. A real
 * difference between the paths is in every measurement, so it still fails: the answer is the first ratio
 * inside the bounds, else the last one, with every attempt's ratio in `ratios` for the failure message.
 */
export async function costRatioWithin(
  a: () => unknown,
  b: () => unknown,
  bounds: { low: number; high: number; attempts?: number },
  opts: CostRatioOptions = {},
): Promise<CostRatio & { ratios: number[] }> {
  const attempts = bounds.attempts ?? 3;
  const ratios: number[] = [];
  for (;;) {
    const result = await medianCostRatio(a, b, opts);
    ratios.push(result.ratio);
    const within = result.ratio > bounds.low && result.ratio < bounds.high;
    if (within || ratios.length >= attempts) return { ...result, ratios };
  }
}

function median(xs: number[]): number {
  return [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)]!;
}
