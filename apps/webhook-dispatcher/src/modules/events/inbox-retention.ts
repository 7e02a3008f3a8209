import { Inject, Injectable, Logger } from '@nestjs/common';
import { APP_CONFIG } from '@tessera/platform';
import { DataSource } from 'typeorm';
import type { Env } from '../../config/env';
import { ScheduledRetention } from '../retention/scheduled-retention';

/** Inbox rows that arrived more than $1 hours ago, at most $2, oldest first through `received_events_received_idx`. */
const DELETE_OLD_INBOX_ROWS = `
  WITH old AS (
    SELECT event_id FROM received_events WHERE received_at < now() - make_interval(hours => $1)
    ORDER BY received_at LIMIT $2 FOR UPDATE SKIP LOCKED),
  gone AS (DELETE FROM received_events r USING old WHERE r.event_id = old.event_id RETURNING 1)
  SELECT count(*)::int AS n FROM gone`;

/**
 * Keeps the inbox bounded (decision 0431): once a minute, deletes `received_events` rows that arrived more than
 * WEBHOOK_INBOX_RETENTION_HOURS ago (0: none), 5,000 per statement, oldest first, until none is left. Replicas
 * skip each other's rows. A row is needed only while its event can still be redelivered, so that the
 * redelivery finds it and changes nothing.
 */
@Injectable()
export class InboxRetention extends ScheduledRetention {
  constructor(db: DataSource, @Inject(APP_CONFIG) env: Env) {
    super({
      db,
      statement: DELETE_OLD_INBOX_ROWS,
      retention: { value: env.WEBHOOK_INBOX_RETENTION_HOURS, name: 'retentionHours' },
      logger: new Logger(InboxRetention.name),
      what: 'inbox',
    });
  }
}
