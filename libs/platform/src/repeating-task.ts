/**
 * Runs `run` every `intervalMs` after the previous run ended (never two at once), until `stop`, which waits for
 * a run in progress: the schedule of the sweepers and schedulers that must finish before the database closes.
 * An interval of 0 turns it off. A run's failure goes to `onError` and the schedule goes on.
 */
export class RepeatingTask {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<unknown> | null = null;
  private stopping = false;

  constructor(
    private readonly intervalMs: number,
    private readonly run: () => Promise<unknown>,
    private readonly onError: (err: Error) => void,
  ) {}

  start(): void {
    if (this.intervalMs > 0) this.arm();
  }

  /** Whether `stop` was called: a long run checks it between its batches. */
  get stopped(): boolean {
    return this.stopping;
  }

  private arm(): void {
    if (this.stopping) return;
    this.timer = setTimeout(() => {
      this.running = this.run()
        .catch((err: Error) => this.onError(err))
        .finally(() => {
          this.running = null;
          this.arm();
        });
    }, this.intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    this.stopping = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running;
  }
}
