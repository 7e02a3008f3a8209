import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { APP_CONFIG } from '@tessera/platform';
import { DataSource } from 'typeorm';
import type { Env } from '../../config/env';

const PRUNE_EVERY_MS = 60_000;
const PRUNE_BATCH = 5000;

/**
 * Keeps the inbox bounded (decision 0431): once a minute, deletes `received_events` rows that arrived more than
 * WEBHOOK_INBOX_RETENTION_HOURS ago (0: none), 5,000 per statement through `received_events_received_idx`,
 * oldest first, until none is left. Replicas skip each other's rows. A row is needed only while its event can
 * still be redelivered, so that the redelivery finds it and changes nothing.
 */
@Injectable()
export class InboxRetention implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(InboxRetention.name);
  private timer: NodeJS.Timeout | null = null;
  private pruning: Promise<unknown> | null = null;
  private stopped = false;

  constructor(
    private readonly db: DataSource,
    @Inject(APP_CONFIG) private readonly env: Env,
  ) {}

  onApplicationBootstrap(): void {
    this.schedule();
  }

  private schedule(): void {
    if (this.stopped || this.env.WEBHOOK_INBOX_RETENTION_HOURS === 0) return;
    this.timer = setTimeout(() => {
      this.pruning = this.prune()
        .catch((err) => this.logger.warn({ err: (err as Error).message }, 'inbox retention pass failed'))
        .finally(() => {
          this.pruning = null;
          this.schedule();
        });
    }, PRUNE_EVERY_MS);
  }

  /** One retention pass; returns how many inbox rows it deleted. */
  async prune(): Promise<number> {
    const hours = this.env.WEBHOOK_INBOX_RETENTION_HOURS;
    if (hours === 0) return 0;
    let deleted = 0;
    for (;;) {
      const [{ n }] = await this.db.query<{ n: number }[]>(
        `WITH old AS (
           SELECT event_id FROM received_events WHERE received_at < now() - make_interval(hours => $1)
           ORDER BY received_at LIMIT $2 FOR UPDATE SKIP LOCKED),
         gone AS (DELETE FROM received_events r USING old WHERE r.event_id = old.event_id RETURNING 1)
         SELECT count(*)::int AS n FROM gone`,
        [hours, PRUNE_BATCH],
      );
      deleted += n;
      if (n < PRUNE_BATCH || this.stopped) break;
    }
    if (deleted > 0)
      this.logger.log({ deleted, retentionHours: hours }, 'inbox: rows past retention deleted');
    return deleted;
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.pruning;
  }
}
