export interface BatcherOptions<I, R> {
  /**
   * Runs one batch and answers one entry per item, in the same order. An `Error` entry fails only its item;
   * throwing fails every item of the batch (unless `retryAlone` says to try them one by one).
   */
  run: (items: I[]) => Promise<(R | Error)[]>;
  /** Most items in one batch; the rest wait for the next one. */
  maxBatchSize?: number;
  /** Batches allowed in flight at once (each one holds one database connection while it runs). */
  maxConcurrentBatches?: number;
  /**
   * When a batch of several items throws and this answers true (say, bad data in one item), each item is
   * run again alone, so one bad item fails only itself. Otherwise (database down) every caller gets the error.
   */
  retryAlone?: (error: unknown) => boolean;
  /**
   * Items with the same key are never in flight at once (say, two requests with one Idempotency-Key: the
   * second must see what the first committed). A later item waits for the earlier one's batch to finish.
   */
  conflictKey?: (item: I) => string | undefined;
}

interface Waiter<I, R> {
  item: I;
  resolve: (result: R) => void;
  reject: (error: unknown) => void;
}

/**
 * Group commit for a hot write path: callers `submit` one item each and get their own result, but every item
 * that arrives in the same event-loop turn, or while a batch is in flight, goes to the database together as
 * one batch (one statement, one commit). Under load the batch grows with the queue; an idle caller still
 * goes out at once (after the current turn), so a lone request waits for nothing.
 */
export class Batcher<I, R> {
  private queue: Waiter<I, R>[] = [];
  private inFlight = 0;
  private scheduled = false;
  private readonly busyKeys = new Set<string>();
  private readonly maxBatchSize: number;
  private readonly maxConcurrentBatches: number;

  constructor(private readonly options: BatcherOptions<I, R>) {
    this.maxBatchSize = options.maxBatchSize ?? 100;
    this.maxConcurrentBatches = options.maxConcurrentBatches ?? 1;
    if (this.maxBatchSize < 1 || this.maxConcurrentBatches < 1) {
      throw new Error('Batcher: maxBatchSize and maxConcurrentBatches must be at least 1');
    }
  }

  submit(item: I): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      this.schedule();
    });
  }

  /** Items waiting for a batch (not counting those in flight). */
  get pending(): number {
    return this.queue.length;
  }

  private schedule(): void {
    if (this.scheduled || this.inFlight >= this.maxConcurrentBatches) return;
    this.scheduled = true;
    // setImmediate, not a microtask: requests whose bytes arrived in the same poll phase join this batch.
    setImmediate(() => {
      this.scheduled = false;
      this.flush();
    });
  }

  private flush(): void {
    while (this.queue.length > 0 && this.inFlight < this.maxConcurrentBatches) {
      const batch = this.take();
      if (batch.length === 0) return; // every waiting item shares a key with a batch in flight
      this.inFlight += 1;
      void this.runBatch(batch).finally(() => {
        this.inFlight -= 1;
        for (const waiter of batch) this.release(waiter.item);
        // Whatever queued up meanwhile goes out now, as the next batch.
        if (this.queue.length > 0) this.flush();
      });
    }
  }

  /** The next batch: up to maxBatchSize items, skipping (for now) those whose key is already taken. */
  private take(): Waiter<I, R>[] {
    const { conflictKey } = this.options;
    if (!conflictKey) return this.queue.splice(0, this.maxBatchSize);
    const batch: Waiter<I, R>[] = [];
    const later: Waiter<I, R>[] = [];
    for (const waiter of this.queue) {
      const key = conflictKey(waiter.item);
      if (batch.length >= this.maxBatchSize || (key !== undefined && this.busyKeys.has(key))) {
        later.push(waiter);
        continue;
      }
      if (key !== undefined) this.busyKeys.add(key);
      batch.push(waiter);
    }
    this.queue = later;
    return batch;
  }

  private release(item: I): void {
    const key = this.options.conflictKey?.(item);
    if (key !== undefined) this.busyKeys.delete(key);
  }

  private async runBatch(batch: Waiter<I, R>[]): Promise<void> {
    let results: (R | Error)[];
    try {
      results = await this.options.run(batch.map((w) => w.item));
      if (results.length !== batch.length) {
        throw new Error(`Batcher: run answered ${results.length} results for ${batch.length} items`);
      }
    } catch (error) {
      if (batch.length > 1 && this.options.retryAlone?.(error)) {
        await Promise.all(batch.map((waiter) => this.runBatch([waiter])));
      } else {
        for (const waiter of batch) waiter.reject(error);
      }
      return;
    }
    batch.forEach((waiter, i) => {
      const result = results[i];
      if (result instanceof Error) waiter.reject(result);
      else waiter.resolve(result);
    });
  }
}
