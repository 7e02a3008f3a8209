import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { APP_CONFIG, RetentionPass } from '@tessera/platform';
import { DataSource } from 'typeorm';
import type { Env } from '../../config/env';

/**
 * Keeps the inbox bounded (decision 0431): once a minute, deletes `received_events` rows that arrived more than
 * WEBHOOK_INBOX_RETENTION_HOURS ago (0: none), 5,000 per statement through `received_events_received_idx`,
 * oldest first, until none is left. Replicas skip each other's rows. A row is needed only while its event can
 * still be redelivered, so that the redelivery finds it and changes nothing.
 */
@Injectable()
export class InboxRetention implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(InboxRetention.name);
  private readonly retention: RetentionPass;

  constructor(
    private readonly db: DataSource,
    @Inject(APP_CONFIG) private readonly env: Env,
  ) {
    const hours = env.WEBHOOK_INBOX_RETENTION_HOURS;
    this.retention = new RetentionPass({
      deleteBatch: async (limit) => {
        const [{ n }] = await this.db.query<{ n: number }[]>(
          `WITH old AS (
             SELECT event_id FROM received_events WHERE received_at < now() - make_interval(hours => $1)
             ORDER BY received_at LIMIT $2 FOR UPDATE SKIP LOCKED),
           gone AS (DELETE FROM received_events r USING old WHERE r.event_id = old.event_id RETURNING 1)
           SELECT count(*)::int AS n FROM gone`,
          [hours, limit],
        );
        return n;
      },
      batch: 5000,
      everyMs: 60_000,
      onDeleted: (deleted) =>
        this.logger.log({ deleted, retentionHours: hours }, 'inbox: rows past retention deleted'),
      onError: (err) => this.logger.warn({ err: err.message }, 'inbox retention pass failed'),
    });
  }

  onApplicationBootstrap(): void {
    if (this.env.WEBHOOK_INBOX_RETENTION_HOURS !== 0) this.retention.start();
  }

  /** One retention pass now; returns how many inbox rows it deleted. */
  prune(): Promise<number> {
    return this.env.WEBHOOK_INBOX_RETENTION_HOURS === 0 ? Promise.resolve(0) : this.retention.run();
  }

  onApplicationShutdown(): Promise<void> {
    return this.retention.stop();
  }
}
