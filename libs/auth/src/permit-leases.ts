import type { RateLimiter, RateLimitRule, RateLimitTake } from './rate-limiter';

/** What `PermitLeases.take` answers: how many of the wanted requests were admitted, and when to retry the rest. */
export type LeaseTake = Pick<RateLimitTake, 'admitted' | 'retryAfterSeconds'>;

export interface PermitLeaseOptions {
  /** How long permits taken ahead stay usable before they are handed back, in ms. */
  leaseMs?: number;
  /** At most this share of the limit is held ahead, per bucket and per process… */
  maxShare?: number;
  /** …and never more than this many permits. */
  maxPermits?: number;
  /**
   * How long `close` waits for the permits it hands back, in ms (decision 0484): a Redis that hangs at shutdown
   * must not hold the shutdown. A permit not handed back keeps its slot until its segment leaves the window.
   */
  closeTimeoutMs?: number;
}

/** `PermitLeaseOptions.closeTimeoutMs` by default: the shutdown's own Redis probe waits as long (decision 0478). */
export const PERMIT_CLOSE_TIMEOUT_MS = 1000;

/** One bucket's permits taken ahead, and how many requests the bucket served since they were taken. */
interface Lease {
  permits: number;
  segment: number;
  expiresAt: number;
  served: number;
}

/**
 * Permits taken ahead from a sliding-window `RateLimiter` (decision 0428). A bucket under steady load asks
 * Redis for the requests waiting plus as many more as it served since its last answer (at most `maxPermits`
 * and `maxShare` of the limit), keeps the extra ones for `leaseMs`, and admits the next requests from them
 * without a round trip. Every permit is counted in Redis before it is used, so the window never admits more
 * than its limit across processes. What changes is that another process may be refused while this one holds
 * unused permits, for at most `leaseMs`: expired permits are handed back (`RateLimiter.handBack`), and a
 * bucket that is not busy takes none ahead, so a single process counts exactly as one call per request.
 */
export class PermitLeases {
  private readonly leases = new Map<string, Lease>();
  private readonly ahead: number;
  private readonly leaseMs: number;
  private readonly closeTimeoutMs: number;
  private sweeper?: NodeJS.Timeout;

  constructor(
    private readonly limiter: RateLimiter,
    private readonly rule: RateLimitRule,
    options: PermitLeaseOptions = {},
  ) {
    this.leaseMs = options.leaseMs ?? 50;
    this.closeTimeoutMs = options.closeTimeoutMs ?? PERMIT_CLOSE_TIMEOUT_MS;
    this.ahead = Math.min(options.maxPermits ?? 64, Math.floor(rule.limit * (options.maxShare ?? 0.01)));
  }

  /** Admits one request of `bucket` from the permits held for it; false when there is none to use. */
  tryLocal(bucket: string): boolean {
    const lease = this.leases.get(bucket);
    if (!lease || lease.permits === 0 || Date.now() >= lease.expiresAt) return false;
    lease.permits -= 1;
    lease.served += 1;
    return true;
  }

  /**
   * Admits `wanted` requests of `bucket`: first from the permits this process still holds (a concurrent take
   * may have just taken some ahead), then in Redis, with as many more taken ahead as the bucket served since
   * its last take, which it keeps. Answers how many were admitted and, for the others, the window's
   * Retry-After, as `RateLimiter.take` does.
   */
  async take(bucket: string, wanted: number): Promise<LeaseTake> {
    const previous = this.leases.get(bucket);
    const live = previous !== undefined && Date.now() < previous.expiresAt;
    const held = live ? Math.min(wanted, previous.permits) : 0;
    if (held > 0) {
      previous!.permits -= held;
      previous!.served += held;
      if (held === wanted) return { admitted: wanted, retryAfterSeconds: 0 };
    }
    if (previous && !live) this.handBack(bucket, previous);
    const needed = wanted - held;
    // Demand is what the bucket served during its last lease, if that lease is recent.
    const busy = previous !== undefined && Date.now() < previous.expiresAt + this.leaseMs;
    const spare = busy ? Math.min(this.ahead, previous.served) : 0;
    const taken = await this.limiter.take(bucket, this.rule, needed + spare);
    const kept = taken.admitted - Math.min(needed, taken.admitted);
    let admitted = Math.min(needed, taken.admitted);
    const current = this.leases.get(bucket);
    // Redis may have refused some because a concurrent take of this process took permits ahead: they serve.
    if (current && admitted < needed && Date.now() < current.expiresAt) {
      const extra = Math.min(needed - admitted, current.permits);
      current.permits -= extra;
      admitted += extra;
    }
    if (
      current &&
      current.permits > 0 &&
      current.segment === taken.segment &&
      Date.now() < current.expiresAt
    ) {
      // A lease still holding permits is kept (with its expiry): these join it.
      current.permits += kept;
      current.served += admitted;
    } else {
      // A lease is never dropped with permits in it: they go back to Redis first.
      if (current) this.handBack(bucket, current);
      this.leases.set(bucket, {
        permits: kept,
        segment: taken.segment,
        expiresAt: Date.now() + this.leaseMs,
        served: admitted,
      });
      this.sweepSoon();
    }
    return {
      admitted: held + admitted,
      retryAfterSeconds: held + admitted === wanted ? 0 : taken.retryAfterSeconds,
    };
  }

  /**
   * Hands back every permit still held (at shutdown), waiting at most `closeTimeoutMs` for Redis: a hung Redis
   * never answers, and a command with no timeout of its own would hold the shutdown (decision 0484).
   */
  async close(): Promise<void> {
    clearInterval(this.sweeper);
    this.sweeper = undefined;
    const pending = [...this.leases].map(([bucket, lease]) => this.handBack(bucket, lease));
    this.leases.clear();
    if (pending.length === 0) return;
    let timer: NodeJS.Timeout | undefined;
    const givenUp = new Promise<void>((resolve) => (timer = setTimeout(resolve, this.closeTimeoutMs)));
    await Promise.race([Promise.all(pending), givenUp]).finally(() => clearTimeout(timer));
  }

  /** The unused permits of `lease` go back to Redis; the lease keeps its served count for the next take. */
  private handBack(bucket: string, lease: Lease): Promise<unknown> {
    const unused = lease.permits;
    lease.permits = 0;
    if (unused === 0) return Promise.resolve();
    // Best effort: a permit not handed back only keeps its slot until its segment leaves the window.
    return this.limiter.handBack(bucket, lease.segment, unused).catch(() => undefined);
  }

  /** Expired permits are handed back within one more lease period, and idle buckets are forgotten. */
  private sweepSoon(): void {
    if (this.sweeper) return;
    this.sweeper = setInterval(() => {
      const now = Date.now();
      for (const [bucket, lease] of this.leases) {
        if (now < lease.expiresAt) continue;
        void this.handBack(bucket, lease);
        if (now >= lease.expiresAt + 10 * this.leaseMs) this.leases.delete(bucket);
      }
      if (this.leases.size === 0) {
        clearInterval(this.sweeper);
        this.sweeper = undefined;
      }
    }, this.leaseMs);
    this.sweeper.unref();
  }
}
