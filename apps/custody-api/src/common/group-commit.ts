interface Waiting<I, O> {
  item: I;
  resolve: (outcome: O) => void;
  reject: (err: unknown) => void;
}

export interface GroupCommitOptions<I> {
  /** Most items written by one call of the writer. */
  maxBatch: number;
  /** Batches written at once (default 1). A second batch can prepare while the first holds its locks. */
  maxInFlight?: number;
  /** Items with the same key never share a batch: the later one waits for the next. */
  conflictKey?: (item: I) => string | undefined;
}

/**
 * Group commit: callers submit one item each; items that arrive while batches are being written are
 * written together by the next call of `write`, so N concurrent requests cost one database transaction
 * instead of N. At most `maxInFlight` batches are written at once per process. `write` returns one outcome
 * per item, in order. When a batch of several items throws, each item is retried alone, so one bad item
 * fails only its own caller. Items with the same conflict key are never written at the same time.
 */
export class GroupCommit<I, O> {
  private queue: Waiting<I, O>[] = [];
  private inFlight = 0;
  private scheduled = false;
  private readonly busyKeys = new Set<string>();

  constructor(
    private readonly write: (items: I[]) => Promise<O[]>,
    private readonly options: GroupCommitOptions<I>,
  ) {}

  submit(item: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        // Let the requests parsed in this event-loop turn join the same batch.
        setImmediate(() => {
          this.scheduled = false;
          this.pump();
        });
      }
    });
  }

  private pump(): void {
    while (this.queue.length > 0 && this.inFlight < (this.options.maxInFlight ?? 1)) {
      const batch = this.take();
      if (batch.length === 0) return; // every queued item waits for a key in flight
      this.inFlight++;
      void this.writeBatch(batch).finally(() => {
        this.inFlight--;
        for (const w of batch) this.release(w.item);
        this.pump();
      });
    }
  }

  private take(): Waiting<I, O>[] {
    const { maxBatch, conflictKey } = this.options;
    if (!conflictKey) return this.queue.splice(0, maxBatch);
    const batch: Waiting<I, O>[] = [];
    const later: Waiting<I, O>[] = [];
    for (const waiting of this.queue) {
      const key = conflictKey(waiting.item);
      if (batch.length >= maxBatch || (key !== undefined && this.busyKeys.has(key))) {
        later.push(waiting);
        continue;
      }
      if (key !== undefined) this.busyKeys.add(key);
      batch.push(waiting);
    }
    this.queue = later;
    return batch;
  }

  private release(item: I): void {
    const key = this.options.conflictKey?.(item);
    if (key !== undefined) this.busyKeys.delete(key);
  }

  private async writeBatch(batch: Waiting<I, O>[]): Promise<void> {
    try {
      const outcomes = await this.write(batch.map((w) => w.item));
      batch.forEach((w, i) => w.resolve(outcomes[i]!));
    } catch (err) {
      if (batch.length === 1) {
        batch[0]!.reject(err);
        return;
      }
      for (const waiting of batch) await this.writeBatch([waiting]);
    }
  }
}
