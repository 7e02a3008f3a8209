/**
 * Runs an async task one call at a time, folding the requests made while it runs into one more call, and
 * starting it at most once per interval (decisions 0418, 0419): the outbox relay's passes and a producer's
 * wake-up NOTIFYs. The first request after a quiet interval starts at once; a request within the interval
 * after a start is folded into one call at the interval's end. Intervals are measured on `performance.now()`,
 * which is monotonic, so a wall-clock step cannot hold the task back.
 */
export class PacedTask {
  private running: Promise<void> | null = null;
  private again = false;
  private paced: NodeJS.Timeout | null = null;
  private lastStart = -Infinity;
  private intervalMs = 0;
  private stopped = false;

  /**
   * @param task a call's work; a rejection is the task's own to report, and is dropped here.
   * @param afterRun called when a call ends with no request waiting (say, to arm a backstop poll).
   */
  constructor(
    private readonly task: () => Promise<void>,
    private readonly afterRun?: () => void,
  ) {}

  /** Runs the task now, or right after the current call, or at the end of `minIntervalMs` after the last start. */
  request(minIntervalMs: number): void {
    if (this.stopped) return;
    this.intervalMs = minIntervalMs;
    if (this.running) {
      this.again = true;
      return;
    }
    if (this.paced) return; // a call is due at the end of the interval; it covers this request too
    const wait = this.lastStart + this.intervalMs - performance.now();
    if (wait > 0) {
      this.paced = setTimeout(() => {
        this.paced = null;
        this.request(this.intervalMs);
      }, wait);
      this.paced.unref();
      return;
    }
    this.lastStart = performance.now();
    this.running = this.task()
      .catch(() => undefined)
      .finally(() => {
        this.running = null;
        if (this.again) {
          this.again = false;
          this.request(this.intervalMs);
        } else if (!this.stopped) {
          this.afterRun?.();
        }
      });
  }

  /** Takes no more requests; resolves when the current call (if any) has ended. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.paced) clearTimeout(this.paced);
    this.paced = null;
    await this.running;
  }
}
