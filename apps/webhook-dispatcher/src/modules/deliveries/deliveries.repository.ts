import { Injectable } from '@nestjs/common';
import type { DeliveryStatus, WebhookEventPayload } from '@tessera/contracts';
import {
  Batcher,
  isDataError,
  type PreparedQuery,
  preparedQuery,
  sqlState,
  timeOfOrderedId,
} from '@tessera/platform';
import { DataSource } from 'typeorm';
import { WebhookAttemptEntity } from './entities/webhook-attempt.entity';
import { WebhookDeliveryEntity } from './entities/webhook-delivery.entity';
import { mayTakeOneMore } from './permits';

/**
 * Most arrivals (or attempts) in one statement, and statements of each kind in flight at once. One: deliveries
 * finish one at a time, so a second statement in flight mostly carried the one or two items that came in while
 * the first ran; with one, they wait for it and go together (a fifth fewer statements, decision 0412).
 */
const BATCH_MAX = 200;
const BATCHES_IN_FLIGHT = 1;

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
  /** The claim's end as the database stored it (whole milliseconds): the claim's token (decision 0452). */
  claimedUntil: Date;
  /**
   * The claim's end on this process's clock (Date.now() when the claim statement left, plus the lease): the
   * database's is no earlier. No request of this claim may still run then (decision 0452).
   */
  leaseDeadline: number;
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

/** What arrives for one event: its inbox row, and the delivery to create when an endpoint subscribes. */
export interface Arrival {
  inbox: WebhookEventPayload | null;
  delivery: NewDelivery | null;
  /** The new delivery's claim lasts until now + leaseMs. */
  leaseMs: number;
}

export interface ArrivalResult {
  /** The inbox row was written by this call (false: the event was already there, or there was none). */
  recorded: boolean;
  /** The new delivery, claimed by the caller; null when there was none to create or it already exists. */
  claimed: ClaimedDelivery | null;
}

interface AttemptItem {
  claimed: ClaimedDelivery;
  attempt: AttemptRecord;
  next: { status: DeliveryStatus; nextAttemptAt: Date | null; lastError: string | null };
}

const CLAIMED_COLUMNS = `id, event_id AS "eventId", endpoint_id AS "endpointId", payload, attempt_count AS "attemptCount",
  attempt_base AS "attemptBase", occurred_at AS "occurredAt", claimed_until AS "claimedUntil"`;

/** A claim's end, to the millisecond, so that it goes through a JavaScript Date unchanged (the claim's token). */
const leaseEnd = (leaseMs: string) =>
  `date_trunc('milliseconds', now() + make_interval(secs => ${leaseMs} / 1000))`;

/**
 * A batch of arrivals in one statement (decision 0402): the inbox rows (ON CONFLICT DO NOTHING) and the new
 * deliveries, created already claimed (ON CONFLICT on the (event, endpoint) key DO NOTHING: a redelivered event
 * creates nothing). Rows go in key order, so two batches sharing keys lock them in the same order.
 */
const ARRIVE_BATCH = `
WITH input AS (
  SELECT * FROM jsonb_to_recordset($1::jsonb) AS x(
    event_id uuid, endpoint_id uuid, tenant_id text, source text, event_type text, entity_type text,
    entity_id text, payload text, occurred_at timestamptz, lease_ms float8, sequence bigint, inbox boolean, data jsonb)
), inbox AS (
  INSERT INTO received_events (event_id, source, tenant_id, event_type, entity_type, entity_id, data, occurred_at, sequence)
  SELECT event_id, source, tenant_id, event_type, entity_type, entity_id, data, occurred_at, sequence
    FROM input WHERE inbox ORDER BY event_id
  ON CONFLICT (event_id) DO NOTHING
  RETURNING event_id
), created AS (
  INSERT INTO webhook_deliveries
    (id, event_id, endpoint_id, tenant_id, source, event_type, entity_type, entity_id, payload, occurred_at,
     next_attempt_at, claimed_until, sequence)
  SELECT uuidv7(), event_id, endpoint_id, tenant_id, source, event_type, entity_type, entity_id, payload, occurred_at,
         ${leaseEnd('lease_ms')}, ${leaseEnd('lease_ms')}, sequence
    FROM input WHERE endpoint_id IS NOT NULL ORDER BY event_id, endpoint_id
  ON CONFLICT (event_id, endpoint_id) DO NOTHING
  RETURNING ${CLAIMED_COLUMNS}
)
SELECT (SELECT coalesce(json_agg(event_id), '[]') FROM inbox) AS recorded,
       (SELECT coalesce(json_agg(created), '[]') FROM created) AS claimed`;

/**
 * A batch of attempts in one statement: each delivery's attempt count, state and schedule, and its attempt
 * row. Guarded by the attempt count each claim saw: a delivery another worker took over meanwhile (or that
 * appears twice in the batch) is written once, by the first matching item.
 *
 * `w.id = ANY (ARRAY(SELECT id FROM input))` is for the planner: it guesses 100 rows for jsonb_to_recordset,
 * so below some 50,000 deliveries it joined by scanning the whole table for every batch (EXPLAIN: a seq scan
 * of 15,000 rows, 367 buffers, for 7 attempts); the array condition is an index lookup on the primary key.
 * A generic plan made while the table was still a few pages would scan it all the same, and keep scanning as
 * it grows: the dispatcher's sessions turn sequential scans off for that (decision 0413).
 */
export const RECORD_BATCH = `
WITH input AS (
  SELECT * FROM jsonb_to_recordset($1::jsonb) AS x(
    i int, id uuid, attempt_count int, attempt_base int, claimed_until timestamptz, status text, next_attempt_at timestamptz,
    attempted_at timestamptz,
    last_error text, request_url text, http_status_code int, response_body text, error_message text,
    duration_ms int, success boolean)
), d AS (
  UPDATE webhook_deliveries w SET
    attempt_count = w.attempt_count + 1,
    -- Re-queued by the partner while this attempt was in flight (attempt_base moved): a failed outcome keeps the
    -- re-queue's fresh cycle instead of writing the old cycle's next step (or its end, dead) over it, and the
    -- cycle's first attempt, which waited for this one to end (decision 0452), is due now.
    status = CASE WHEN w.attempt_base <> x.attempt_base AND x.status <> 'delivered' THEN w.status ELSE x.status END,
    next_attempt_at = CASE WHEN w.attempt_base <> x.attempt_base AND x.status <> 'delivered'
                           THEN now() ELSE x.next_attempt_at END,
    claimed_until = NULL,
    last_attempt_at = x.attempted_at,
    delivered_at = CASE WHEN x.status = 'delivered' THEN x.attempted_at ELSE w.delivered_at END,
    last_error = x.last_error
  FROM input x WHERE w.id = x.id AND w.attempt_count = x.attempt_count
    -- Only the claim that is still the delivery's: a worker whose lease ran out and was taken over is not.
    AND w.claimed_until IS NOT DISTINCT FROM x.claimed_until
    AND w.id = ANY (ARRAY(SELECT id FROM input))
  RETURNING w.id, w.attempt_count, x.i
), attempts AS (
  INSERT INTO webhook_attempts
    (id, delivery_id, attempt_number, request_url, http_status_code, response_body, error_message, duration_ms,
     attempted_at, success)
  SELECT uuidv7(), d.id, d.attempt_count, x.request_url, x.http_status_code, x.response_body, x.error_message, x.duration_ms,
         x.attempted_at, x.success
    FROM d JOIN input x ON x.i = d.i
)
SELECT i FROM d`;

/**
 * The poller's claim (DeliveriesRepository.claimDue): $1 limit (the free slots), $2 lease, $3 per-endpoint cap,
 * $4 endpoints that may take no slot now, $5 candidate window, $6/$7 the other endpoints in flight and how many of
 * theirs, $8 the slots kept for endpoints holding fewer (decision 0478). Each candidate's level is how many slots
 * its endpoint would hold before taking it; the rows are taken by level, then due time (each slot to the endpoint
 * holding the fewest), while mayTakeOneMore holds for the k-th of them (k slots already taken by this claim).
 */
const CLAIM_DUE = `
UPDATE webhook_deliveries SET next_attempt_at = ${leaseEnd('$2::float8')}, claimed_until = ${leaseEnd('$2::float8')}
 WHERE id IN (
   SELECT id FROM (
     SELECT id, level, row_number() OVER (ORDER BY level, next_attempt_at, id) - 1 AS k FROM (
       SELECT c.id, c.next_attempt_at,
              row_number() OVER (PARTITION BY c.endpoint_id ORDER BY c.next_attempt_at, c.id) - 1
                + coalesce(b.busy, 0) AS level
         FROM (SELECT id, endpoint_id, next_attempt_at FROM webhook_deliveries
                WHERE status IN ('pending', 'failed') AND next_attempt_at <= now()
                  AND endpoint_id <> ALL ($4::uuid[])
                ORDER BY next_attempt_at LIMIT $5 FOR UPDATE SKIP LOCKED) c
         LEFT JOIN unnest($6::uuid[], $7::int[]) AS b(endpoint_id, busy) ON b.endpoint_id = c.endpoint_id
     ) leveled
   ) ranked
   -- Levels rise with k and the slots left fall, so the rows that pass are the first ones.
   WHERE level < $3 AND $1 - k > least(level, $8))
RETURNING ${CLAIMED_COLUMNS}`;

/** Postgres text cannot hold NUL: a receiver's reply (or an error naming it) keeps the rest of its text. */
const storable = (text: string | null): string | null =>
  text === null ? null : text.replace(/\0/g, '\uFFFD');

/** Bad data in one item fails only that item; a deadlock between two replicas' batches is retried alone too. */
const retryAlone = (error: unknown): boolean => isDataError(error) || sqlState(error) === '40P01';

/**
 * The dispatcher's hot writes go through group commit (decision 0402): every arrival and every attempt that
 * comes in while the previous batch is in flight goes to Postgres with the others, as one statement and one
 * commit. An idle dispatcher waits for nothing (a batch leaves at the end of the current event-loop turn).
 */
@Injectable()
export class DeliveriesRepository {
  private readonly prepared: PreparedQuery;
  private readonly arrivals: Batcher<Arrival, ArrivalResult>;
  private readonly attemptBatcher: Batcher<AttemptItem, boolean>;

  constructor(private readonly dataSource: DataSource) {
    this.prepared = preparedQuery(dataSource);
    this.arrivals = new Batcher({
      run: (items) => this.arriveMany(items),
      maxBatchSize: BATCH_MAX,
      maxConcurrentBatches: BATCHES_IN_FLIGHT,
      retryAlone,
    });
    this.attemptBatcher = new Batcher({
      run: (items) => this.recordMany(items),
      maxBatchSize: BATCH_MAX,
      maxConcurrentBatches: BATCHES_IN_FLIGHT,
      retryAlone,
    });
  }

  /** Records an event's inbox row and creates its delivery, claimed by the caller; see ArrivalResult. */
  arrive(arrival: Arrival): Promise<ArrivalResult> {
    return this.arrivals.submit(arrival);
  }

  /**
   * Creates the delivery already claimed by the caller (lease until now + leaseMs), or returns null when this
   * (event, endpoint) pair exists: the unique key makes redelivery of the same event harmless.
   */
  async insertClaimed(
    d: NewDelivery,
    leaseMs: number,
    inbox?: WebhookEventPayload,
  ): Promise<ClaimedDelivery | null> {
    return (await this.arrive({ delivery: d, inbox: inbox ?? null, leaseMs })).claimed;
  }

  private async arriveMany(items: Arrival[]): Promise<ArrivalResult[]> {
    const sentAt = Date.now();
    const input = items.map(({ inbox, delivery, leaseMs }) => {
      const e = delivery ?? inbox!;
      return {
        event_id: e.eventId.toLowerCase(),
        endpoint_id: delivery?.endpointId.toLowerCase() ?? null,
        tenant_id: e.tenantId,
        source: e.source,
        event_type: e.eventType,
        entity_type: e.entityType,
        entity_id: e.entityId,
        payload: delivery?.payload ?? null,
        occurred_at: delivery ? delivery.occurredAt.toISOString() : inbox!.occurredAt,
        lease_ms: leaseMs,
        sequence: delivery ? delivery.sequence : (inbox!.sequence ?? null),
        inbox: inbox !== null,
        data: inbox?.data ?? null,
      };
    });
    const [row] = await this.prepared<{ recorded: string[]; claimed: ClaimedDelivery[] }>(
      'webhooks_arrive_batch',
      ARRIVE_BATCH,
      [JSON.stringify(input)],
    );
    const recorded = new Set(row!.recorded);
    const claimed = new Map(
      row!.claimed.map((c) => {
        // Set on the row object, not spread into a copy (decision 0422).
        c.occurredAt = new Date(c.occurredAt);
        c.claimedUntil = new Date(c.claimedUntil);
        return [`${c.eventId}|${c.endpointId}`, c];
      }),
    );
    return items.map((item, i) => {
      const key = `${input[i]!.event_id}|${input[i]!.endpoint_id}`;
      const mine = item.delivery ? (claimed.get(key) ?? null) : null;
      if (mine) {
        mine.leaseDeadline = sentAt + item.leaseMs;
        claimed.delete(key); // the same pair twice in one batch: the first caller holds the claim
      }
      const wasRecorded = item.inbox !== null && recorded.delete(input[i]!.event_id);
      return { recorded: wasRecorded, claimed: mine };
    });
  }

  /**
   * Claims due deliveries (retries, re-queues, and claims whose worker died) with SKIP LOCKED: at most `limit`
   * (the caller's free slots), at most `perEndpoint` of one endpoint counting the `busy` ones the caller already
   * has in flight (decision 0455), and the last `reserve` slots only for endpoints holding fewer than that
   * (mayTakeOneMore, decision 0478). Each slot goes to the endpoint holding the fewest, then to the oldest due
   * row. The endpoints that may take no slot now are skipped in the scan, so slow receivers' backlogs do not fill
   * it; the others' are taken from a window of `4 × limit` due rows.
   */
  async claimDue(
    limit: number,
    leaseMs: number,
    perEndpoint: number,
    busy: ReadonlyMap<string, number>,
    reserve = 0,
  ): Promise<ClaimedDelivery[]> {
    const held = [...busy].filter(([, n]) => n > 0);
    const blocked = held.filter(([, n]) => !mayTakeOneMore(n, limit, perEndpoint, reserve));
    const partial = held.filter(([, n]) => mayTakeOneMore(n, limit, perEndpoint, reserve));
    const sentAt = Date.now();
    const rows: ClaimedDelivery[] = await this.prepared('webhooks_claim_due', CLAIM_DUE, [
      limit,
      leaseMs,
      perEndpoint,
      blocked.map(([id]) => id),
      4 * limit,
      partial.map(([id]) => id),
      partial.map(([, n]) => n),
      reserve,
    ]);
    for (const c of rows) {
      // Set on the row object, not spread into a copy (decision 0422).
      c.occurredAt = new Date(c.occurredAt);
      c.claimedUntil = new Date(c.claimedUntil);
      c.leaseDeadline = sentAt + leaseMs;
    }
    return rows;
  }

  /**
   * Gives a claim back without an attempt, due now, when too little of its lease is left for a whole request
   * (decision 0452). Only while the claim is still the delivery's (its token): a taken-over one is left alone.
   */
  async release(claimed: ClaimedDelivery): Promise<void> {
    await this.dataSource.query(
      `UPDATE webhook_deliveries SET next_attempt_at = now(), claimed_until = NULL
        WHERE id = $1 AND attempt_count = $2 AND claimed_until = $3`,
      [claimed.id, claimed.attemptCount, claimed.claimedUntil],
    );
  }

  /**
   * Records attempt number attemptCount + 1 and the delivery's new state (one statement per batch). Guarded by
   * the attempt count the claim saw: if another worker took the delivery over meanwhile, nothing is written
   * and the answer is false.
   */
  recordAttempt(
    claimed: ClaimedDelivery,
    attempt: AttemptRecord,
    next: { status: DeliveryStatus; nextAttemptAt: Date | null; lastError: string | null },
  ): Promise<boolean> {
    return this.attemptBatcher.submit({ claimed, attempt, next });
  }

  private async recordMany(items: AttemptItem[]): Promise<boolean[]> {
    const input = items.map(({ claimed, attempt, next }, i) => ({
      i,
      id: claimed.id,
      attempt_count: claimed.attemptCount,
      attempt_base: claimed.attemptBase,
      claimed_until: claimed.claimedUntil.toISOString(),
      status: next.status,
      next_attempt_at: next.nextAttemptAt?.toISOString() ?? null,
      attempted_at: attempt.attemptedAt.toISOString(),
      last_error: storable(next.lastError),
      request_url: attempt.requestUrl,
      http_status_code: attempt.httpStatusCode,
      response_body: storable(attempt.responseBody),
      error_message: storable(attempt.errorMessage),
      duration_ms: attempt.durationMs,
      success: attempt.success,
    }));
    const rows = await this.prepared<{ i: number }>('webhooks_record_batch', RECORD_BATCH, [
      JSON.stringify(input),
    ]);
    const written = new Set(rows.map((r) => r.i));
    return items.map((_, i) => written.has(i));
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
      const at = await this.cursorTime(tenantId, source, opts.cursor);
      if (!at) return 'bad-cursor';
      qb.andWhere('(d.created_at, d.id) < (CAST(:at AS timestamptz), CAST(:cursor AS uuid))', {
        at,
        cursor: opts.cursor,
      });
    }
    return qb.getMany();
  }

  /**
   * Where a page cursor (the last delivery of the page before) stands: its row's `created_at`, to the
   * microsecond. A delivery the retention deleted since (decision 0433) stands at the time its version 7 id
   * carries, so a walk through the oldest pages goes on; an unknown id of another version, or one whose time is
   * still to come (no delivery was deleted there, and past year 9999 Postgres cannot read the time), is a bad
   * cursor (decision 0490).
   */
  private async cursorTime(tenantId: string, source: string, cursor: string): Promise<string | null> {
    const rows: { at: string }[] = await this.dataSource.query(
      `SELECT to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS at
         FROM webhook_deliveries WHERE id = $1 AND tenant_id = $2 AND source = $3`,
      [cursor, tenantId, source],
    );
    if (rows[0]) return rows[0].at;
    const carried = timeOfOrderedId(cursor);
    return carried && carried.getTime() <= Date.now() ? carried.toISOString() : null;
  }

  /** Whether any tenant of `source` has the delivery `id` (decision 0495). */
  exists(source: string, id: string): Promise<boolean> {
    return this.dataSource.getRepository(WebhookDeliveryEntity).existsBy({ id, source });
  }

  find(tenantId: string, source: string, id: string): Promise<WebhookDeliveryEntity | null> {
    return this.dataSource.getRepository(WebhookDeliveryEntity).findOneBy({ id, tenantId, source });
  }

  attempts(deliveryId: string): Promise<WebhookAttemptEntity[]> {
    return this.dataSource
      .getRepository(WebhookAttemptEntity)
      .find({ where: { deliveryId }, order: { attemptNumber: 'ASC' } });
  }

  /**
   * failed or dead -> pending, with a fresh cycle of attempts, due now; null if not in those states. A delivery
   * whose attempt is in flight (claimed, the claim not run out) stays claimed: the attempt's record makes the
   * cycle due at once if it failed (RECORD_BATCH), so no second request runs beside it (decision 0452).
   */
  async requeue(tenantId: string, source: string, id: string): Promise<WebhookDeliveryEntity | null> {
    const updated = await this.prepared<{ id: string }>(
      'webhooks_requeue',
      `UPDATE webhook_deliveries SET status = 'pending', attempt_base = attempt_count,
         next_attempt_at = CASE WHEN claimed_until > now() THEN next_attempt_at ELSE now() END
       WHERE id = $1 AND tenant_id = $2 AND source = $3 AND status IN ('failed', 'dead')
       RETURNING id`,
      [id, tenantId, source],
    );
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
