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
