export interface UntilOptions {
  /** How long to keep reading before failing (20 s by default). */
  ms?: number;
  /** The pause between two reads (50 ms by default). */
  everyMs?: number;
  /** What is awaited, for the failure message. */
  what?: string;
}

/** A value for a failure message: JSON, cut short, or its String() when JSON cannot hold it. */
function shown(value: unknown): string {
  try {
    return (JSON.stringify(value) ?? String(value)).slice(0, 500);
  } catch {
    return String(value);
  }
}

/**
 * Reads until `done` holds and answers the value that made it hold: the one poll loop of the suites, for what
 * happens asynchronously (a worker, a sweep, another process). Fails after `ms` with `what` and the last value.
 */
export async function until<T>(
  read: () => T | Promise<T>,
  done: (value: T) => boolean,
  opts: UntilOptions = {},
): Promise<T> {
  const { ms = 20_000, everyMs = 50, what = 'the condition' } = opts;
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline)
      throw new Error(`Timed out after ${ms} ms waiting for ${what}; last value ${shown(value)}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/** Waits until `check` answers true (until, for a yes/no question). */
export async function untilTrue(
  check: () => boolean | Promise<boolean>,
  what: string,
  opts: Omit<UntilOptions, 'what'> = {},
): Promise<void> {
  await until(check, (ok) => ok, { ...opts, what });
}
