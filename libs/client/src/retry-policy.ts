/**
 * Back-off as both contracts advise:
 * - 429: sleep `Retry-After` seconds when present, else 1 s then exponential with jitter, capped at 30 s;
 * - 502/503/504 (and network errors on idempotent calls): about 1, 2, 4, 8 s, capped near 30 s;
 * - at most `maxAttempts` tries per logical call (6 by default).
 */
export interface RetryOptions {
  /** Tries per logical call, the first included (default 6). */
  maxAttempts?: number;
  /** First back-off step in ms (default 1000). */
  baseDelayMs?: number;
  /** Cap of one computed back-off step in ms (default 30000). */
  maxDelayMs?: number;
  /** Cap of a server-sent `Retry-After` in ms (default 60000): a hint, not a promise to wait forever. */
  maxRetryAfterMs?: number;
  /** Statuses retried with back-off when the call is idempotent (default 502, 503, 504). */
  retryStatuses?: number[];
}

export type ResolvedRetryOptions = Required<RetryOptions>;

export function resolveRetryOptions(options: RetryOptions = {}): ResolvedRetryOptions {
  const resolved = {
    maxAttempts: options.maxAttempts ?? 6,
    baseDelayMs: options.baseDelayMs ?? 1000,
    maxDelayMs: options.maxDelayMs ?? 30_000,
    maxRetryAfterMs: options.maxRetryAfterMs ?? 60_000,
    retryStatuses: options.retryStatuses ?? [502, 503, 504],
  };
  if (!Number.isInteger(resolved.maxAttempts) || resolved.maxAttempts < 1)
    throw new TypeError('retry.maxAttempts must be an integer of at least 1');
  return resolved;
}

/**
 * The n-th back-off step (n = 1 for the first retry): base * 2^(n-1), capped, with ±20 % jitter so that many
 * clients refused at once do not come back in the same millisecond. The result never exceeds the cap.
 */
export function backoffDelayMs(n: number, options: ResolvedRetryOptions, random: () => number): number {
  const step = Math.min(options.maxDelayMs, options.baseDelayMs * 2 ** Math.max(0, n - 1));
  const jittered = step * (0.8 + 0.4 * random());
  return Math.round(Math.min(options.maxDelayMs, jittered));
}

/**
 * `Retry-After` in ms: an integer number of seconds (what both APIs send) or an HTTP date. Undefined when the
 * header is absent or unreadable, so the caller falls back to exponential back-off.
 */
export function retryAfterMs(header: string | null, nowMs: number, capMs: number): number | undefined {
  if (header === null || header.trim() === '') return undefined;
  const value = header.trim();
  if (/^\d+$/.test(value)) return Math.min(capMs, Number(value) * 1000);
  const date = Date.parse(value);
  if (Number.isNaN(date)) return undefined;
  return Math.min(capMs, Math.max(0, date - nowMs));
}
