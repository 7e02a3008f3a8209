import type { Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { RetentionPass } from '@tessera/platform';

export interface ScheduledRetentionOptions {
  /** False when the setting is 0 (keep every row): no pass ever runs. */
  enabled: boolean;
  /** Deletes at most `limit` rows past retention in one statement; answers how many it deleted. */
  deleteBatch: (limit: number) => Promise<number>;
  logger: Logger;
  /** What the log lines name, and the setting they carry. */
  what: string;
  setting: Record<string, number>;
}

/**
 * A dispatcher table kept bounded by `RetentionPass` (libs/platform): a pass once a minute in every replica, 5,000
 * rows per statement until none is left, replicas skipping each other's rows (`FOR UPDATE SKIP LOCKED` in the
 * statement), a failed pass logged and the next one on time, shutdown waiting for a pass in progress.
 */
export abstract class ScheduledRetention implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly pass: RetentionPass;
  private readonly enabled: boolean;

  protected constructor(options: ScheduledRetentionOptions) {
    const { logger, what, setting } = options;
    this.enabled = options.enabled;
    this.pass = new RetentionPass({
      deleteBatch: options.deleteBatch,
      batch: 5000,
      everyMs: 60_000,
      onDeleted: (deleted) => logger.log({ deleted, ...setting }, `${what}: rows past retention deleted`),
      onError: (err) => logger.warn({ err: err.message }, `${what} retention pass failed`),
    });
  }

  onApplicationBootstrap(): void {
    if (this.enabled) this.pass.start();
  }

  /** One retention pass now; returns how many rows it deleted. */
  prune(): Promise<number> {
    return this.enabled ? this.pass.run() : Promise.resolve(0);
  }

  onApplicationShutdown(): Promise<void> {
    return this.pass.stop();
  }
}
