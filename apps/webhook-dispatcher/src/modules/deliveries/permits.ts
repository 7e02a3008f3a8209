/**
 * A counting semaphore: at most `size` holders at once, the rest wait in arrival order. `acquire` answers the
 * function that gives the permit back (call it exactly once).
 */
export class Permits {
  private free: number;
  private readonly waiting: (() => void)[] = [];

  constructor(size: number) {
    if (!Number.isInteger(size) || size < 1) throw new Error('Permits: size must be a positive integer');
    this.free = size;
  }

  async acquire(): Promise<() => void> {
    if (this.free > 0) this.free -= 1;
    else await new Promise<void>((resolve) => this.waiting.push(resolve));
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.waiting.shift();
      if (next) next();
      else this.free += 1;
    };
  }

  /** Holders waiting for a permit. */
  get queued(): number {
    return this.waiting.length;
  }
}

/**
 * The max-min rule of the shared permits (decision 0472), and of the poller's slots (decision 0478): a key (an
 * endpoint) holding `held` of them may take one more only while it holds fewer than `perKey` and more than
 * `min(held, reserve)` are free. One key alone gets `perKey` as long as `reserve <= size - perKey`; the next at most
 * half of what it leaves free, and so on, so the last ones stay for a key holding none.
 */
export function mayTakeOneMore(held: number, free: number, perKey: number, reserve: number): boolean {
  return held < perKey && free > Math.min(held, reserve);
}

interface KeyedWaiter {
  key: string;
  /** Order of arrival across every key. */
  seq: number;
  since: number;
  grant: () => void;
}

/**
 * Request permits shared by every endpoint (decisions 0463, 0472): at most `size` holders at once, at most
 * `perKey` of them with one key (an endpoint), and the last `size - perKey` (the reserve) only for keys holding
 * fewer than that: a key holding `h` takes a permit only while more than `min(h, reserve)` are free. One key
 * alone gets its whole share; the next one at most half of what it leaves free, the one after half of the rest,
 * so one or several slow endpoints leave free permits to an endpoint that holds none. A freed permit goes to
 * the waiting key that holds the fewest (max-min fairness; ties: its oldest waiter arrived first), when that key
 * may take it: an endpoint that holds many waits while others hold fewer, and one that holds none is served in
 * arrival order, so every endpoint makes progress. A waiter may give up after `maxWaitMs`; `congested(key)` tells
 * whether the key's oldest waiter has waited that long already.
 */
export class EndpointPermits {
  private free: number;
  private seq = 0;
  /** The permits only keys holding fewer than this many may take (size − perKey). */
  private readonly reserve: number;
  private readonly held = new Map<string, number>();
  private readonly waiting = new Map<string, KeyedWaiter[]>();

  constructor(
    size: number,
    private readonly perKey: number,
    private readonly congestedAfterMs: number,
  ) {
    if (!Number.isInteger(size) || size < 1 || !Number.isInteger(perKey) || perKey < 1)
      throw new Error('EndpointPermits: size and perKey must be positive integers');
    this.free = size;
    this.reserve = Math.max(0, size - perKey);
  }

  /**
   * A permit for `key`, or null when none came within `maxWaitMs` (without it, waits as long as it takes).
   * The answer releases the permit (call it exactly once; more calls do nothing).
   */
  async acquire(key: string, maxWaitMs?: number): Promise<(() => void) | null> {
    if (!this.waiting.has(key) && this.mayTake(this.held.get(key) ?? 0)) this.take(key);
    else if (!(await this.wait(key, maxWaitMs))) return null;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.give(key);
    };
  }

  /** Whether `key` has a waiter that has waited at least `congestedAfterMs`: its receiver is not keeping up. */
  congested(key: string, now = performance.now()): boolean {
    const head = this.waiting.get(key)?.[0];
    return head !== undefined && now - head.since >= this.congestedAfterMs;
  }

  /** Holders waiting for a permit, over every key. */
  get queued(): number {
    let n = 0;
    for (const queue of this.waiting.values()) n += queue.length;
    return n;
  }

  /** Whether a key holding `held` permits may take one now (the fewer it holds, the likelier). */
  private mayTake(held: number): boolean {
    return mayTakeOneMore(held, this.free, this.perKey, this.reserve);
  }

  private take(key: string): void {
    this.free -= 1;
    this.held.set(key, (this.held.get(key) ?? 0) + 1);
  }

  private wait(key: string, maxWaitMs: number | undefined): Promise<boolean> {
    return new Promise<boolean>((resolve) => {
      let timer: NodeJS.Timeout | undefined;
      const waiter: KeyedWaiter = {
        key,
        seq: this.seq++,
        since: performance.now(),
        grant: () => {
          if (timer) clearTimeout(timer);
          resolve(true);
        },
      };
      const queue = this.waiting.get(key);
      if (queue) queue.push(waiter);
      else this.waiting.set(key, [waiter]);
      if (maxWaitMs !== undefined)
        timer = setTimeout(() => {
          this.drop(waiter);
          resolve(false);
        }, maxWaitMs);
    });
  }

  private drop(waiter: KeyedWaiter): void {
    const queue = this.waiting.get(waiter.key);
    if (!queue) return;
    const i = queue.indexOf(waiter);
    if (i >= 0) queue.splice(i, 1);
    if (queue.length === 0) this.waiting.delete(waiter.key);
  }

  private give(key: string): void {
    const left = this.held.get(key)! - 1;
    if (left > 0) this.held.set(key, left);
    else this.held.delete(key);
    this.free += 1;
    this.handOn();
  }

  /**
   * Hands free permits on, each to the waiting key holding the fewest (ties: the earliest waiter), while that
   * key may take one: when it may not, no waiting key may (`mayTake` only gets likelier as `held` falls). One
   * pass over the waiting keys per permit handed on, never over their waiters. A release can make room for more
   * than one (its key holds one fewer), hence the loop.
   */
  private handOn(): void {
    while (this.free > 0) {
      let next: KeyedWaiter | undefined;
      let fewest = Infinity;
      for (const [k, queue] of this.waiting) {
        const held = this.held.get(k) ?? 0;
        if (held < fewest || (held === fewest && queue[0]!.seq < next!.seq)) {
          fewest = held;
          next = queue[0];
        }
      }
      if (!next || !this.mayTake(fewest)) return;
      this.drop(next);
      this.take(next.key);
      next.grant();
    }
  }
}
