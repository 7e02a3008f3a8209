import { Injectable } from '@nestjs/common';
import { VERIFICATION_EVENTS } from '@tessera/contracts';
import { appendToOutbox, notifyChannel, type PreparedQuery, preparedQuery } from '@tessera/platform';
import { DataSource, type EntityManager } from 'typeorm';
import type { StepProgress } from '../applicants/step-results';
import { CHECKS_CHANNEL } from '../checks/checks-channel';
import type { LevelEntity } from '../levels/entities/level.entity';

/** Everything one SDK call needs about its session, read in one round trip. */
export interface SdkContext {
  enrollmentId: string;
  enrollmentStatus: string;
  expiresAt: Date;
  presentation: Record<string, string | undefined>;
  /** The enrollment's level; the applicant's current level may have moved on (the token is then refused). */
  enrollmentLevelId: string;
  applicant: {
    id: string;
    productId: string;
    externalUserId: string;
    type: 'individual' | 'company';
    levelId: string | null;
    status: string;
    sandbox: boolean;
    info: Record<string, unknown>;
    reviewAnswer: string | null;
    reviewRejectType: string | null;
  };
  level: LevelEntity;
  /** Level keys the partner claimed. */
  locked: string[];
  steps: StepProgress[];
}

const CONTEXT = `
  SELECT e.id AS "enrollmentId", e.status AS "enrollmentStatus", e.expires_at AS "expiresAt", e.presentation,
         e.level_id AS "enrollmentLevelId",
         jsonb_build_object('id', a.id, 'productId', a.product_id, 'externalUserId', a.external_user_id,
           'type', a.type, 'levelId', a.level_id, 'status', a.status, 'sandbox', a.sandbox, 'info', a.info,
           'reviewAnswer', a.review_answer, 'reviewRejectType', a.review_reject_type) AS applicant,
         jsonb_build_object('id', l.id, 'productId', l.product_id, 'name', l.name,
           'applicantType', l.applicant_type, 'isActive', l.is_active, 'isDefault', l.is_default,
           'steps', l.steps, 'attachedQuestionnaireId', l.attached_questionnaire_id,
           'personalInfoFields', l.personal_info_fields,
           'personalInfoRequiredFields', l.personal_info_required_fields,
           'companyDataFields', l.company_data_fields, 'companyRequiredFields', l.company_required_fields,
           'companyRequiredDocuments', l.company_required_documents,
           'companyDocumentsMinRequired', l.company_documents_min_required,
           'companyLegalForms', l.company_legal_forms) AS level,
         (SELECT coalesce(jsonb_agg(c.field ORDER BY c.field), '[]'::jsonb)
            FROM field_claims c WHERE c.applicant_id = a.id) AS locked,
         (SELECT coalesce(jsonb_agg(jsonb_build_object('kind', s.kind, 'reviewStatus', s.review_status,
                   'reviewAnswer', s.review_answer, 'reviewRejectType', s.review_reject_type,
                   'updatedAt', s.updated_at)), '[]'::jsonb)
            FROM applicant_steps s WHERE s.applicant_id = a.id) AS steps
    FROM enrollments e
    JOIN applicants a ON a.id = e.applicant_id
    JOIN levels l ON l.id = e.level_id
   WHERE e.id = $1 AND e.applicant_id = $2 AND e.product_id = $3`;

/** Step states that count as "the user's data is in" (anything past `pending`, except `expired`). */
export const STEP_IN_STATES = ['submitted', 'in_review', 'completed', 'awaitingOperatorReview'];

/** Rows of an UPDATE … RETURNING (TypeORM answers `[rows, rowCount]` for UPDATE statements). */
async function updateReturning<T>(manager: EntityManager, sql: string, params: unknown[]): Promise<T[]> {
  const [rows] = await manager.query<[T[], number]>(sql, params);
  return rows;
}

@Injectable()
export class SdkRepository {
  private readonly prepared: PreparedQuery;

  constructor(private readonly dataSource: DataSource) {
    this.prepared = preparedQuery(dataSource);
  }

  /** Every hosted SDK call but the page loads this: prepared, so each connection plans it once. */
  async context(claims: { enrollmentId: string; applicantId: string; productId: string }) {
    const [row] = await this.prepared<Omit<SdkContext, 'expiresAt'> & { expiresAt: Date }>(
      'sdk_context',
      CONTEXT,
      [claims.enrollmentId, claims.applicantId, claims.productId],
    );
    if (!row) return undefined;
    return {
      ...row,
      steps: row.steps.map((s) => ({ ...s, updatedAt: new Date(s.updatedAt) })),
    } as SdkContext;
  }

  /**
   * Saves SDK-entered identity values (level keys; `null` removes one) and records `applicant.updated`
   * (actor `sdk`) and `applicantPersonalInfoChanged`, in one transaction. Values the partner claimed in the
   * meantime are kept: the claim check runs again under the row lock. Answers the stored info.
   */
  async saveInfo(
    ctx: SdkContext,
    changes: Record<string, unknown>,
  ): Promise<{ info: Record<string, unknown>; refused: string[] }> {
    return this.dataSource.transaction(async (manager) => {
      const [current] = await manager.query<{ info: Record<string, unknown> }[]>(
        'SELECT info FROM applicants WHERE id = $1 FOR UPDATE',
        [ctx.applicant.id],
      );
      const claims = await manager.query<{ field: string }[]>(
        'SELECT field FROM field_claims WHERE applicant_id = $1 AND field = ANY($2::text[])',
        [ctx.applicant.id, Object.keys(changes)],
      );
      const claimed = new Set(claims.map((c) => c.field));
      const refused: string[] = [];
      const set: Record<string, unknown> = {};
      const removed: string[] = [];
      for (const [key, value] of Object.entries(changes)) {
        const same = JSON.stringify(current.info[key] ?? null) === JSON.stringify(value);
        if (claimed.has(key)) {
          if (!same) refused.push(key);
          continue;
        }
        if (same) continue;
        if (value === null) removed.push(key);
        else set[key] = value;
      }
      const changed = [...Object.keys(set), ...removed];
      if (changed.length === 0) return { info: current.info, refused };
      const [row] = await updateReturning<{ info: Record<string, unknown> }>(
        manager,
        `UPDATE applicants SET info = (info || $2::jsonb) - $3::text[], updated_at = now()
          WHERE id = $1 RETURNING info`,
        [ctx.applicant.id, JSON.stringify(set), removed],
      );
      await manager.query(
        `INSERT INTO review_events (applicant_id, product_id, event_type, actor_type, data)
         VALUES ($1, $2, 'applicant.updated', 'sdk', $3::jsonb)`,
        [
          ctx.applicant.id,
          ctx.applicant.productId,
          JSON.stringify({ enrollmentId: ctx.enrollmentId, fields: changed }),
        ],
      );
      await appendToOutbox(manager, [
        {
          tenantId: ctx.applicant.productId,
          eventType: VERIFICATION_EVENTS.APPLICANT_PERSONAL_INFO_CHANGED,
          entityType: 'applicant',
          entityId: ctx.applicant.id,
          data: {
            applicantId: ctx.applicant.id,
            externalUserId: ctx.applicant.externalUserId,
            levelName: ctx.level.name,
            changedFields: changed,
            sandbox: ctx.applicant.sandbox,
            createdAtUtc: new Date().toISOString(),
          },
        },
      ]);
      return { info: row.info, refused };
    });
  }

  /**
   * Moves one step to `submitted` (from no row, `pending` or `submitted`) and records `step.submitted`.
   * Answers the step's state before the call when it was in another state (nothing changes then).
   */
  async submitStep(
    ctx: SdkContext,
    kind: string,
  ): Promise<{ ok: true } | { ok: false; reviewStatus: string }> {
    const result = await this.dataSource.transaction(async (manager) => {
      await manager.query(
        `INSERT INTO applicant_steps (applicant_id, enrollment_id, kind, review_status)
         VALUES ($1, $2, $3, 'submitted')
         ON CONFLICT (applicant_id, kind) DO UPDATE
           SET review_status = 'submitted', enrollment_id = excluded.enrollment_id, review_answer = NULL,
               review_reject_type = NULL, reject_labels = '[]', updated_at = now()
           WHERE applicant_steps.review_status IN ('pending', 'submitted')`,
        [ctx.applicant.id, ctx.enrollmentId, kind],
      );
      const [state] = await manager.query<{ reviewStatus: string; enrollmentId: string | null }[]>(
        `SELECT review_status AS "reviewStatus", enrollment_id AS "enrollmentId"
           FROM applicant_steps WHERE applicant_id = $1 AND kind = $2`,
        [ctx.applicant.id, kind],
      );
      if (state.reviewStatus !== 'submitted' || state.enrollmentId !== ctx.enrollmentId) {
        return { ok: false, reviewStatus: state.reviewStatus };
      }
      await manager.query(
        `INSERT INTO review_events (applicant_id, product_id, event_type, actor_type, data)
         VALUES ($1, $2, 'step.submitted', 'sdk', $3::jsonb)`,
        [ctx.applicant.id, ctx.applicant.productId, JSON.stringify({ enrollmentId: ctx.enrollmentId, kind })],
      );
      return { ok: true } as const;
    });
    if (result.ok) this.wakeChecks();
    return result;
  }

  /**
   * Submits the enrollment, in one transaction: steps without user input (`serverKinds`) that are still
   * pending move to `submitted`; the enrollment becomes `submitted`, the applicant `pending`;
   * `enrollment.submitted` is recorded and `applicantPending` written to the outbox. The enrollment row lock
   * makes a concurrent second submit see `already`.
   */
  async submitEnrollment(ctx: SdkContext, serverKinds: string[]): Promise<'submitted' | 'already'> {
    const result = await this.dataSource.transaction(async (manager) => {
      const opened = await updateReturning<{ id: string }>(
        manager,
        `UPDATE enrollments SET status = 'submitted', updated_at = now()
          WHERE id = $1 AND status = 'open' RETURNING id`,
        [ctx.enrollmentId],
      );
      if (opened.length === 0) return 'already';
      for (const kind of serverKinds) {
        await manager.query(
          `INSERT INTO applicant_steps (applicant_id, enrollment_id, kind, review_status)
           VALUES ($1, $2, $3, 'submitted')
           ON CONFLICT (applicant_id, kind) DO UPDATE
             SET review_status = 'submitted', enrollment_id = excluded.enrollment_id, updated_at = now()
             WHERE applicant_steps.review_status = 'pending'`,
          [ctx.applicant.id, ctx.enrollmentId, kind],
        );
      }
      await manager.query(`UPDATE applicants SET status = 'pending', updated_at = now() WHERE id = $1`, [
        ctx.applicant.id,
      ]);
      await manager.query(
        `INSERT INTO review_events (applicant_id, product_id, event_type, actor_type, data)
         VALUES ($1, $2, 'enrollment.submitted', 'sdk', $3::jsonb)`,
        [
          ctx.applicant.id,
          ctx.applicant.productId,
          JSON.stringify({ enrollmentId: ctx.enrollmentId, levelId: ctx.level.id }),
        ],
      );
      await appendToOutbox(manager, [
        {
          tenantId: ctx.applicant.productId,
          eventType: VERIFICATION_EVENTS.APPLICANT_PENDING,
          entityType: 'applicant',
          entityId: ctx.applicant.id,
          data: {
            applicantId: ctx.applicant.id,
            externalUserId: ctx.applicant.externalUserId,
            levelName: ctx.level.name,
            sandbox: ctx.applicant.sandbox,
            createdAtUtc: new Date().toISOString(),
          },
        },
      ]);
      return 'submitted' as const;
    });
    if (result === 'submitted') this.wakeChecks();
    return result;
  }

  /** Committed: the worker's step discovery looks for submitted steps now, not at its next poll (decision 0407). */
  private wakeChecks(): void {
    notifyChannel(this.dataSource, CHECKS_CHANNEL);
  }
}
