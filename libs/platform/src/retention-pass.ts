/**
 * A table's retention (decisions 0404, 0431): every `everyMs`, one pass at a time, deletes rows past their
 * retention in statements of at most `batch` rows until a statement comes back short or the pass is stopped.
 * Each statement is short, so replicas that take their rows with `FOR UPDATE SKIP LOCKED` skip each other's
 * rather than wait. A failed pass is handed to `onError` and the next one runs on time.
 */
export class RetentionPass {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<unknown> | null = null;
  private stopped = false;

  constructor(
    private readonly options: {
      /** Deletes up to `limit` rows past retention; resolves to how many it deleted. */
      deleteBatch: (limit: number) => Promise<number>;
      batch: number;
      everyMs: number;
      /** After a pass that deleted rows (to log how many). */
      onDeleted: (deleted: number) => void;
      onError: (err: Error) => void;
    },
  ) {}

  /** Schedules the passes (the first after one interval). */
  start(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.running = this.run()
        .catch((err: Error) => this.options.onError(err))
        .finally(() => {
          this.running = null;
          this.start();
        });
    }, this.options.everyMs);
  }

  /** One pass now; resolves to how many rows it deleted. */
  async run(): Promise<number> {
    let deleted = 0;
    for (;;) {
      const n = await this.options.deleteBatch(this.options.batch);
      deleted += n;
      if (n < this.options.batch || this.stopped) break;
    }
    if (deleted > 0) this.options.onDeleted(deleted);
    return deleted;
  }

  /** No more passes; resolves once a pass in progress has ended. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running;
  }
}
