interface Waiting<I, O> {
  item: I;
  resolve: (outcome: O) => void;
  reject: (err: unknown) => void;
}

export interface GroupCommitOptions<I> {
  /** Most items written by one call of the writer. */
  maxBatch: number;
  /** Items with the same key never share a batch: the later one waits for the next. */
  conflictKey?: (item: I) => string | undefined;
}

/**
 * Group commit: callers submit one item each; items that arrive while a batch is being written are
 * written together by the next call of `write`, so N concurrent requests cost one database transaction
 * instead of N. One batch is in flight at a time per process. `write` returns one outcome per item, in
 * order. When a batch of several items throws, each item is retried alone, so one bad item fails only
 * its own caller.
 */
export class GroupCommit<I, O> {
  private queue: Waiting<I, O>[] = [];
  private draining = false;

  constructor(
    private readonly write: (items: I[]) => Promise<O[]>,
    private readonly options: GroupCommitOptions<I>,
  ) {}

  submit(item: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      if (!this.draining) {
        this.draining = true;
        // Let the requests parsed in this event-loop turn join the first batch.
        setImmediate(() => void this.drain());
      }
    });
  }

  private async drain(): Promise<void> {
    while (this.queue.length > 0) await this.writeBatch(this.take());
    this.draining = false;
  }

  private take(): Waiting<I, O>[] {
    const { maxBatch, conflictKey } = this.options;
    if (!conflictKey) return this.queue.splice(0, maxBatch);
    const batch: Waiting<I, O>[] = [];
    const later: Waiting<I, O>[] = [];
    const keys = new Set<string>();
    for (const waiting of this.queue) {
      const key = conflictKey(waiting.item);
      if (batch.length >= maxBatch || (key !== undefined && keys.has(key))) {
        later.push(waiting);
        continue;
      }
      if (key !== undefined) keys.add(key);
      batch.push(waiting);
    }
    this.queue = later;
    return batch;
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
