import { Inject, Injectable, Logger } from '@nestjs/common';
import { APP_CONFIG } from '@tessera/platform';
import { DataSource } from 'typeorm';
import type { Env } from '../../config/env';
import { ScheduledRetention } from '../retention/scheduled-retention';

/**
 * Finished deliveries created more than $1 days ago and not attempted since, at most $2, oldest first through
 * `webhook_deliveries_finished_idx`, with their attempts.
 */
const DELETE_OLD_DELIVERIES = `
  WITH old AS (
    SELECT id FROM webhook_deliveries
     WHERE status IN ('delivered', 'dead') AND created_at < now() - make_interval(days => $1)
       AND coalesce(last_attempt_at, created_at) < now() - make_interval(days => $1)
     ORDER BY created_at LIMIT $2 FOR UPDATE SKIP LOCKED),
  attempts AS (DELETE FROM webhook_attempts a USING old WHERE a.delivery_id = old.id),
  gone AS (DELETE FROM webhook_deliveries d USING old WHERE d.id = old.id RETURNING 1)
  SELECT count(*)::int AS n FROM gone`;

/**
 * Keeps the delivery log bounded (decision 0433): once a minute, deletes finished deliveries (`delivered` or
 * `dead`) created more than WEBHOOK_DELIVERY_RETENTION_DAYS ago and not attempted since (0: none), with their
 * attempts, 5,000 deliveries per statement, oldest first, until none is left. A delivery still pending or
 * failed (retrying) is never deleted, however old, nor one an operator retried within the retention.
 */
@Injectable()
export class DeliveryRetention extends ScheduledRetention {
  constructor(db: DataSource, @Inject(APP_CONFIG) env: Env) {
    super({
      db,
      statement: DELETE_OLD_DELIVERIES,
      retention: { value: env.WEBHOOK_DELIVERY_RETENTION_DAYS, name: 'retentionDays' },
      logger: new Logger(DeliveryRetention.name),
      what: 'deliveries',
    });
  }
}
