import { Injectable } from '@nestjs/common';
import type { DeliveryStatus, WebhookEventPayload } from '@tessera/contracts';
import { DataSource } from 'typeorm';
import { WebhookAttemptEntity } from './entities/webhook-attempt.entity';
import { WebhookDeliveryEntity } from './entities/webhook-delivery.entity';

export interface NewDelivery {
  eventId: string;
  endpointId: string;
  tenantId: string;
  source: string;
  eventType: string;
  entityType: string;
  entityId: string;
  sequence: number | null;
  payload: string;
  occurredAt: Date;
}

/** A delivery this worker holds the lease on. */
export interface ClaimedDelivery {
  id: string;
  eventId: string;
  endpointId: string;
  payload: string;
  attemptCount: number;
  attemptBase: number;
  occurredAt: Date;
}

export interface AttemptRecord {
  requestUrl: string;
  httpStatusCode: number | null;
  responseBody: string | null;
  errorMessage: string | null;
  durationMs: number;
  attemptedAt: Date;
  success: boolean;
}

const CLAIMED_COLUMNS = `id, event_id AS "eventId", endpoint_id AS "endpointId", payload, attempt_count AS "attemptCount",
  attempt_base AS "attemptBase", occurred_at AS "occurredAt"`;

@Injectable()
export class DeliveriesRepository {
  constructor(private readonly dataSource: DataSource) {}

  /**
   * Creates the delivery already claimed by the caller (lease until now + leaseMs), or returns null when this
   * (event, endpoint) pair exists: the unique key makes redelivery of the same event harmless.
   */
  async insertClaimed(
    d: NewDelivery,
    leaseMs: number,
    inbox?: WebhookEventPayload,
  ): Promise<ClaimedDelivery | null> {
    const params: unknown[] = [
      d.eventId,
      d.endpointId,
      d.tenantId,
      d.source,
      d.eventType,
      d.entityType,
      d.entityId,
      d.payload,
      d.occurredAt,
      leaseMs,
      d.sequence,
    ];
    // The inbox row of a relayed event rides in the same statement (one round trip per event).
    const inboxCte = inbox
      ? `WITH inbox AS (
           INSERT INTO received_events (event_id, source, tenant_id, event_type, entity_type, entity_id, data, occurred_at, sequence)
           VALUES ($1, $4, $3, $5, $6, $7, $12::jsonb, $9, $11) ON CONFLICT (event_id) DO NOTHING)`
      : '';
    if (inbox) params.push(JSON.stringify(inbox.data));
    const rows: ClaimedDelivery[] = await this.dataSource.query(
      `${inboxCte}
       INSERT INTO webhook_deliveries
         (event_id, endpoint_id, tenant_id, source, event_type, entity_type, entity_id, payload, occurred_at, next_attempt_at, sequence)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, now() + make_interval(secs => $10::float8 / 1000), $11)
       ON CONFLICT (event_id, endpoint_id) DO NOTHING
       RETURNING ${CLAIMED_COLUMNS}`,
      params,
    );
    return rows[0] ?? null;
  }

  /** Claims due deliveries (retries, re-queues, and claims whose worker died) with SKIP LOCKED. */
  async claimDue(limit: number, leaseMs: number): Promise<ClaimedDelivery[]> {
    return this.dataSource
      .query(
        `UPDATE webhook_deliveries SET next_attempt_at = now() + make_interval(secs => $2::float8 / 1000)
       WHERE id IN (
         SELECT id FROM webhook_deliveries
         WHERE status IN ('pending', 'failed') AND next_attempt_at <= now()
         ORDER BY next_attempt_at LIMIT $1 FOR UPDATE SKIP LOCKED)
       RETURNING ${CLAIMED_COLUMNS}`,
        [limit, leaseMs],
      )
      .then((r: [ClaimedDelivery[], number] | ClaimedDelivery[]) =>
        Array.isArray(r[0]) ? (r[0] as ClaimedDelivery[]) : (r as ClaimedDelivery[]),
      );
  }

  /**
   * Records attempt number attemptCount + 1 and the delivery's new state in one statement. Guarded by the
   * attempt count the claim saw: if another worker took the delivery over meanwhile, nothing is written.
   */
  async recordAttempt(
    claimed: ClaimedDelivery,
    attempt: AttemptRecord,
    next: { status: DeliveryStatus; nextAttemptAt: Date | null; lastError: string | null },
  ): Promise<boolean> {
    const rows: unknown[] = await this.dataSource.query(
      `WITH d AS (
         UPDATE webhook_deliveries SET
           attempt_count = attempt_count + 1, status = $3, next_attempt_at = $4, last_attempt_at = $5,
           delivered_at = CASE WHEN $3 = 'delivered' THEN $5 ELSE delivered_at END, last_error = $6
         WHERE id = $1 AND attempt_count = $2
         RETURNING id, attempt_count)
       INSERT INTO webhook_attempts
         (delivery_id, attempt_number, request_url, http_status_code, response_body, error_message, duration_ms, attempted_at, success)
       SELECT d.id, d.attempt_count, $7, $8, $9, $10, $11, $5, $12 FROM d
       RETURNING id`,
      [
        claimed.id,
        claimed.attemptCount,
        next.status,
        next.nextAttemptAt,
        attempt.attemptedAt,
        next.lastError,
        attempt.requestUrl,
        attempt.httpStatusCode,
        attempt.responseBody,
        attempt.errorMessage,
        attempt.durationMs,
        attempt.success,
      ],
    );
    return rows.length > 0;
  }

  async list(
    tenantId: string,
    source: string,
    opts: { pageSize: number; cursor?: string; status?: DeliveryStatus },
  ): Promise<WebhookDeliveryEntity[] | 'bad-cursor'> {
    const qb = this.dataSource
      .getRepository(WebhookDeliveryEntity)
      .createQueryBuilder('d')
      .where('d.tenant_id = :tenantId AND d.source = :source', { tenantId, source })
      .orderBy('d.created_at', 'DESC')
      .addOrderBy('d.id', 'DESC')
      .take(opts.pageSize + 1);
    if (opts.status) qb.andWhere('d.status = :status', { status: opts.status });
    if (opts.cursor) {
      const exists = await this.find(tenantId, source, opts.cursor);
      if (!exists) return 'bad-cursor';
      qb.andWhere(
        '(d.created_at, d.id) < (SELECT c.created_at, c.id FROM webhook_deliveries c WHERE c.id = :cursor)',
        { cursor: opts.cursor },
      );
    }
    return qb.getMany();
  }

  find(tenantId: string, source: string, id: string): Promise<WebhookDeliveryEntity | null> {
    return this.dataSource.getRepository(WebhookDeliveryEntity).findOneBy({ id, tenantId, source });
  }

  attempts(deliveryId: string): Promise<WebhookAttemptEntity[]> {
    return this.dataSource
      .getRepository(WebhookAttemptEntity)
      .find({ where: { deliveryId }, order: { attemptNumber: 'ASC' } });
  }

  /** failed or dead -> pending, due now, with a fresh cycle of attempts. Null if not in those states. */
  async requeue(tenantId: string, source: string, id: string): Promise<WebhookDeliveryEntity | null> {
    const rows: { id: string }[][] = await this.dataSource.query(
      `UPDATE webhook_deliveries SET status = 'pending', attempt_base = attempt_count, next_attempt_at = now()
       WHERE id = $1 AND tenant_id = $2 AND source = $3 AND status IN ('failed', 'dead')
       RETURNING id`,
      [id, tenantId, source],
    );
    const updated = Array.isArray(rows[0]) ? rows[0] : rows;
    return updated.length > 0 ? this.find(tenantId, source, id) : null;
  }

  /** Deliveries due now or later that are not finished: a gauge for operators. */
  async backlog(): Promise<number> {
    const rows: { n: string }[] = await this.dataSource.query(
      `SELECT count(*) AS n FROM webhook_deliveries WHERE status IN ('pending', 'failed')`,
    );
    return Number(rows[0]?.n ?? 0);
  }
}
