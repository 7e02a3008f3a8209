import { Injectable } from '@nestjs/common';
import { PARTNER_REVIEW_EVENTS, VERIFICATION_EVENTS } from '@tessera/contracts';
import {
  appendToOutbox,
  Batcher,
  isDataError,
  type PreparedQuery,
  preparedQuery,
  sqlState,
  wakeOutboxRelay,
} from '@tessera/platform';
import { DataSource, type EntityManager } from 'typeorm';
import { reopenScreening } from '../checks/screening-reopen';
import { recordReviewEvent } from '../reviews/review-events';

export interface ApplicantRow {
  id: string;
  productId: string;
  externalUserId: string;
  type: 'individual' | 'company';
  levelId: string | null;
  levelName: string | null;
  status: string;
  riskLevel: string;
  info: Record<string, unknown>;
  attempt: number;
  reviewAnswer: string | null;
  reviewRejectType: string | null;
  rejectLabels: string[];
  moderationComment: string | null;
  reviewedAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
  hasNoUbos: boolean;
  hasNoShareholders: boolean;
  hasNoDirectors: boolean;
  hasNoRepresentatives: boolean;
  blocklisted: boolean;
  /** Created through a sandbox credential; a spawned UBO child takes its parent's (decision 0434). */
  sandbox: boolean;
  lockedFields: string[];
}

export interface NewApplicant {
  productId: string;
  externalUserId: string;
  type: 'individual' | 'company';
  levelId: string | null;
  levelName: string | null;
  /** Identity fields under level keys; every one becomes a partner claim. */
  info: Record<string, unknown>;
  sandbox: boolean;
}

export interface StepRow {
  kind: string;
  reviewStatus: string;
  reviewAnswer: string | null;
  reviewRejectType: string | null;
  updatedAt: Date;
}

export interface StructureRow {
  total: number;
  ubos: number;
  directors: number;
  shareholders: number;
  representatives: number;
  spawned: number;
  completed: number;
  rejected: number;
  pending: number;
  lastChildCompletedAt: Date | null;
}

const APPLICANT_SELECT = `
  SELECT a.id, a.product_id AS "productId", a.external_user_id AS "externalUserId", a.type,
         a.level_id AS "levelId", l.name AS "levelName", a.status, a.risk_level AS "riskLevel", a.info,
         a.attempt, a.review_answer AS "reviewAnswer", a.review_reject_type AS "reviewRejectType",
         a.reject_labels AS "rejectLabels", a.moderation_comment AS "moderationComment",
         a.reviewed_at AS "reviewedAt", a.created_at AS "createdAt", a.updated_at AS "updatedAt",
         a.has_no_ubos AS "hasNoUbos", a.has_no_shareholders AS "hasNoShareholders",
         a.has_no_directors AS "hasNoDirectors", a.has_no_representatives AS "hasNoRepresentatives",
         a.blocklisted, a.sandbox,
         (SELECT coalesce(jsonb_agg(c.field ORDER BY c.field), '[]'::jsonb)
            FROM field_claims c WHERE c.applicant_id = a.id) AS "lockedFields"
    FROM applicants a LEFT JOIN levels l ON l.id = a.level_id`;

export type CreateResult = { created: true; id: string; createdAt: Date } | { created: false };

/**
 * Creates per batch statement; and how many batches may run at once (each holds one pooled connection). One
 * (decision 0420): the creates that arrive during a commit make the next batch larger, which costs Postgres
 * less per create than a second, smaller batch committing beside it.
 */
const CREATE_BATCH_MAX = 100;
const CREATE_BATCHES_IN_FLIGHT = 1;

const createKey = (a: { productId: string; externalUserId: string }) => `${a.productId}/${a.externalUserId}`;

/** Text Postgres cannot store (a NUL character, an invalid sequence): the client's input, not a fault. */
export const isUnstorableText = (error: unknown): boolean => ['22021', '22P05'].includes(sqlState(error));

/**
 * $1 is a JSON array of NewApplicant. Columns and values are those of the single-applicant create this
 * replaced; the outbox row has exactly the columns `appendToOutbox` writes (docs/decisions/0101), and carries
 * sequence 1: an applicant's first event, numbered from its row (decision 0426; the row starts at 1).
 */
const CREATE_BATCH = `
  WITH input AS (
    SELECT * FROM jsonb_to_recordset($1::jsonb) AS t(
      "productId" uuid, "externalUserId" text, type text, "levelId" uuid, "levelName" text, info jsonb,
      sandbox boolean)
  ), ins AS (
    INSERT INTO applicants (product_id, external_user_id, type, level_id, info, sandbox)
    SELECT "productId", "externalUserId", type, "levelId", info, sandbox FROM input
    ORDER BY "externalUserId", "productId"
    ON CONFLICT (external_user_id, product_id) DO NOTHING
    RETURNING id, product_id, external_user_id, type, info, created_at
  ), claims AS (
    INSERT INTO field_claims (applicant_id, field, value)
    SELECT ins.id, f.key, f.value FROM ins, jsonb_each(ins.info) f
  ), ev AS (
    INSERT INTO review_events (applicant_id, product_id, event_type, actor_type, data, at)
    SELECT ins.id, ins.product_id, 'applicant.created', 'partner', '{}'::jsonb, ins.created_at FROM ins
  ), outbox_row AS (
    INSERT INTO outbox (id, tenant_id, event_type, entity_type, entity_id, data, occurred_at, sequence)
    SELECT uuidv7(), ins.product_id::text, $2, 'applicant', ins.id::text,
           jsonb_build_object(
             'applicantId', ins.id, 'externalUserId', ins.external_user_id, 'type', ins.type,
             'levelName', input."levelName", 'sandbox', input.sandbox,
             'createdAtUtc', to_char(ins.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')),
           ins.created_at, 1
      FROM ins JOIN input ON input."externalUserId" = ins.external_user_id AND input."productId" = ins.product_id
  )
  SELECT id, product_id AS "productId", external_user_id AS "externalUserId", created_at AS "createdAt" FROM ins`;

/** An enrollment still out with the user, or an applicant whose review is under way. */
const IN_FLIGHT = `
  SELECT 1 FROM applicants a WHERE a.id = $1 AND a.status IN ('pending', 'in_review', 'awaiting_user')
  UNION ALL
  SELECT 1 FROM enrollments e
   WHERE e.applicant_id = $1 AND e.status IN ('open', 'submitted', 'in_review') AND e.expires_at > now()
  LIMIT 1`;

@Injectable()
export class ApplicantsRepository {
  private readonly prepared: PreparedQuery;
  private readonly createBatcher: Batcher<NewApplicant, CreateResult>;

  constructor(private readonly dataSource: DataSource) {
    this.prepared = preparedQuery(dataSource);
    this.createBatcher = new Batcher({
      run: (items) => this.createMany(items),
      maxBatchSize: CREATE_BATCH_MAX,
      maxConcurrentBatches: CREATE_BATCHES_IN_FLIGHT,
      // Bad data in one create (say a NUL character) fails the whole statement: rerun each alone so it
      // fails only its own request. Anything else (database down) fails every create of the batch.
      retryAlone: isDataError,
    });
  }

  /**
   * The applicant with this externalUserId in the caller's product, else one of another product (the
   * caller then gets 403), else undefined. One index probe on (external_user_id, product_id).
   */
  async findForProduct(productId: string, externalUserId: string): Promise<ApplicantRow | undefined> {
    const [row] = await this.prepared<ApplicantRow>(
      'verification_applicant_for_product',
      `${APPLICANT_SELECT} WHERE a.external_user_id = $1 ORDER BY (a.product_id = $2) DESC LIMIT 1`,
      [externalUserId, productId],
    );
    return row;
  }

  /**
   * Creates the applicant, its partner claims, the `applicant.created` review event and the `applicantCreated`
   * outbox row. Race-safe: concurrent creates of one externalUserId meet on the unique index and all but one
   * see `created: false`.
   *
   * This is the hot path. Concurrent creates are grouped (`Batcher`, docs/decisions/0105): every create that
   * arrives while the previous batch is in flight goes out with the others as ONE data-modifying statement,
   * so a batch costs one round trip and one commit (one WAL flush, one relay wake) however many
   * applicants it holds. Postgres runs the statement atomically, so each applicant's rows commit together.
   */
  create(input: NewApplicant): Promise<CreateResult> {
    return this.createBatcher.submit(input);
  }

  /**
   * One statement for a batch of creates. A (product, externalUserId) pair that appears twice in one batch is
   * inserted once: its first caller gets `created: true`, the others `created: false` (a repeat, as if it had
   * come a moment later). Rows are inserted in key order, so two batches (or two replicas) that share keys
   * take their unique-index locks in the same order and cannot deadlock.
   */
  private async createMany(items: NewApplicant[]): Promise<CreateResult[]> {
    const unique = new Map<string, NewApplicant>();
    for (const item of items) if (!unique.has(createKey(item))) unique.set(createKey(item), item);
    const rows = await this.prepared<{
      id: string;
      productId: string;
      externalUserId: string;
      createdAt: Date;
    }>('verification_applicant_create_batch', CREATE_BATCH, [
      JSON.stringify([...unique.values()]),
      VERIFICATION_EVENTS.APPLICANT_CREATED,
    ]);
    // Committed (one autocommitted statement): wake the relay for the `applicantCreated` rows (decision 0403).
    if (rows.length > 0) wakeOutboxRelay(this.dataSource);
    const inserted = new Map(rows.map((row) => [createKey(row), row]));
    return items.map((item) => {
      const key = createKey(item);
      const row = inserted.get(key);
      if (!row) return { created: false };
      inserted.delete(key);
      return { created: true, id: row.id, createdAt: row.createdAt };
    });
  }

  /**
   * Merges changed identity fields (level keys) and re-claims them; a `null` clears its field and drops its
   * claim (reopened: the SDK collects it). Writes `applicant.updated` and `applicantPersonalInfoChanged`, all
   * in one transaction. 'in_flight' when `registrationCountry` would change while a verification is under way.
   */
  async updateInfo(
    applicant: Pick<ApplicantRow, 'id' | 'productId' | 'externalUserId'>,
    changes: Record<string, unknown>,
    opts: { countryKey: string },
  ): Promise<'ok' | 'in_flight' | 'gone'> {
    return this.dataSource.transaction(async (manager) => {
      const [current] = await manager.query<{ info: Record<string, unknown>; sandbox: boolean }[]>(
        'SELECT info, sandbox FROM applicants WHERE id = $1 FOR UPDATE',
        [applicant.id],
      );
      if (!current) return 'gone';
      const changed = Object.keys(changes).filter(
        (key) => JSON.stringify(current.info[key] ?? null) !== JSON.stringify(changes[key] ?? null),
      );
      if (changed.includes(opts.countryKey) && (await this.inFlight(manager, applicant.id)))
        return 'in_flight';
      const claimed = Object.fromEntries(Object.entries(changes).filter(([, value]) => value !== null));
      const reopened = Object.keys(changes).filter((key) => changes[key] === null);
      await manager.query(
        `UPDATE applicants SET info = (info || $2::jsonb) - $3::text[], updated_at = now() WHERE id = $1`,
        [applicant.id, JSON.stringify(claimed), reopened],
      );
      await manager.query(
        `INSERT INTO field_claims (applicant_id, field, value)
         SELECT $1, f.key, f.value FROM jsonb_each($2::jsonb) f
         ON CONFLICT (applicant_id, field)
         DO UPDATE SET value = excluded.value, claimed_by = 'partner', claimed_at = now()`,
        [applicant.id, JSON.stringify(claimed)],
      );
      if (reopened.length > 0) {
        await manager.query('DELETE FROM field_claims WHERE applicant_id = $1 AND field = ANY($2::text[])', [
          applicant.id,
          reopened,
        ]);
      }
      const rescreened = await reopenScreening(manager, applicant.id, changed);
      await recordReviewEvent(manager, applicant, 'applicant.updated', 'partner', {
        fields: Object.keys(changes),
        reopened,
        reopenedSteps: rescreened,
      });
      await appendToOutbox(manager, [
        {
          tenantId: applicant.productId,
          eventType: VERIFICATION_EVENTS.APPLICANT_PERSONAL_INFO_CHANGED,
          entityType: 'applicant',
          entityId: applicant.id,
          data: {
            applicantId: applicant.id,
            externalUserId: applicant.externalUserId,
            changedFields: changed,
            claimedFields: Object.keys(claimed),
            sandbox: current.sandbox,
            createdAtUtc: new Date().toISOString(),
          },
        },
      ]);
      return 'ok';
    });
  }

  private async inFlight(manager: EntityManager, applicantId: string): Promise<boolean> {
    const rows: unknown[] = await manager.query(IN_FLIGHT, [applicantId]);
    return rows.length > 0;
  }

  steps(applicantId: string): Promise<StepRow[]> {
    return this.dataSource.query<StepRow[]>(
      `SELECT kind, review_status AS "reviewStatus", review_answer AS "reviewAnswer",
              review_reject_type AS "reviewRejectType", updated_at AS "updatedAt"
         FROM applicant_steps WHERE applicant_id = $1`,
      [applicantId],
    );
  }

  /** Partner-visible review events only, oldest first; `total` counts every match before the limit. */
  async history(
    applicantId: string,
    filter: { since?: Date; limit: number; eventType?: string },
  ): Promise<{ items: { at: Date; eventType: string; actorType: string }[]; total: number }> {
    const types = filter.eventType ? [filter.eventType] : [...PARTNER_REVIEW_EVENTS];
    const rows = await this.dataSource.query<
      { at: Date; eventType: string; actorType: string; total: string }[]
    >(
      `SELECT at, event_type AS "eventType", actor_type AS "actorType", count(*) OVER () AS total
         FROM review_events
        WHERE applicant_id = $1 AND event_type = ANY($2::text[]) AND ($3::timestamptz IS NULL OR at >= $3)
        ORDER BY at, id
        LIMIT $4`,
      [applicantId, types, filter.since ?? null, filter.limit],
    );
    return {
      items: rows.map(({ at, eventType, actorType }) => ({ at, eventType, actorType })),
      total: rows.length > 0 ? Number(rows[0].total) : 0,
    };
  }

  /** UBO roll-up of a company: live rows only; a row with several roles counts once per role. */
  async structure(applicantId: string): Promise<StructureRow> {
    const [row] = await this.dataSource.query<Record<string, string | Date | null>[]>(
      `SELECT count(*) AS total,
              count(*) FILTER (WHERE u.roles ? 'ubo') AS ubos,
              count(*) FILTER (WHERE u.roles ? 'director') AS directors,
              count(*) FILTER (WHERE u.roles ? 'shareholder') AS shareholders,
              count(*) FILTER (WHERE u.roles ? 'representative') AS representatives,
              count(c.id) AS spawned,
              count(*) FILTER (WHERE c.status = 'approved') AS completed,
              count(*) FILTER (WHERE c.status = 'rejected') AS rejected,
              count(*) FILTER (WHERE c.id IS NOT NULL AND c.status NOT IN ('approved', 'rejected')) AS pending,
              max(c.reviewed_at) FILTER (WHERE c.status IN ('approved', 'rejected')) AS "lastChildCompletedAt"
         FROM ubos u LEFT JOIN applicants c ON c.id = u.linked_applicant_id
        WHERE u.parent_applicant_id = $1 AND NOT u.removed`,
      [applicantId],
    );
    const n = (key: string) => Number(row[key] ?? 0);
    return {
      total: n('total'),
      ubos: n('ubos'),
      directors: n('directors'),
      shareholders: n('shareholders'),
      representatives: n('representatives'),
      spawned: n('spawned'),
      completed: n('completed'),
      rejected: n('rejected'),
      pending: n('pending'),
      lastChildCompletedAt: (row.lastChildCompletedAt as Date | null) ?? null,
    };
  }
}
