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

interface KeyedWaiter {
  key: string;
  /** Order of arrival across every key. */
  seq: number;
  since: number;
  grant: () => void;
}

/**
 * Request permits shared by every endpoint (decision 0463): at most `size` holders at once, and at most
 * `perKey` of them with one key (an endpoint), so a slow endpoint leaves `size - perKey` permits to the others.
 * A freed permit goes to the waiter that arrived first among the keys still under their share. A waiter may
 * give up after `maxWaitMs`; `congested(key)` tells whether the key's oldest waiter has waited that long already.
 */
export class EndpointPermits {
  private free: number;
  private seq = 0;
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
  }

  /**
   * A permit for `key`, or null when none came within `maxWaitMs` (without it, waits as long as it takes).
   * The answer releases the permit (call it exactly once; more calls do nothing).
   */
  async acquire(key: string, maxWaitMs?: number): Promise<(() => void) | null> {
    if (this.free > 0 && (this.held.get(key) ?? 0) < this.perKey && !this.waiting.has(key)) this.take(key);
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
    // Hand the permit on: the earliest waiter among the keys under their share.
    let next: KeyedWaiter | undefined;
    for (const [k, queue] of this.waiting)
      if ((this.held.get(k) ?? 0) < this.perKey && (!next || queue[0]!.seq < next.seq)) next = queue[0];
    if (!next) return;
    this.drop(next);
    this.take(next.key);
    next.grant();
  }
}
