import type { Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { RetentionPass } from '@tessera/platform';
import type { DataSource } from 'typeorm';

export interface ScheduledRetentionOptions {
  db: DataSource;
  /**
   * Deletes at most `$2` rows older than the retention `$1` (in the setting's unit), skipping locked rows, and
   * answers one row `n`: how many it deleted.
   */
  statement: string;
  /** The retention setting: its value (0 keeps every row) and its name in the log lines. */
  retention: { value: number; name: string };
  logger: Logger;
  /** What the log lines name. */
  what: string;
}

/**
 * A dispatcher table kept bounded by `RetentionPass` (libs/platform): a pass once a minute in every replica, 5,000
 * rows per statement until none is left, replicas skipping each other's rows (`FOR UPDATE SKIP LOCKED` in the
 * statement), a failed pass logged and the next one on time, shutdown waiting for a pass in progress.
 */
export abstract class ScheduledRetention implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly pass: RetentionPass;
  private readonly enabled: boolean;

  protected constructor({ db, statement, retention, logger, what }: ScheduledRetentionOptions) {
    this.enabled = retention.value !== 0;
    this.pass = new RetentionPass({
      deleteBatch: async (limit) => {
        const [{ n }] = await db.query<{ n: number }[]>(statement, [retention.value, limit]);
        return n;
      },
      batch: 5000,
      everyMs: 60_000,
      onDeleted: (deleted) =>
        logger.log({ deleted, [retention.name]: retention.value }, `${what}: rows past retention deleted`),
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
