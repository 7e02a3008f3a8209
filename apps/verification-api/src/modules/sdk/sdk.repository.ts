import { Injectable } from '@nestjs/common';
import { VERIFICATION_EVENTS } from '@tessera/contracts';
import { appendToOutbox, notifyChannel } from '@tessera/platform';
import { DataSource } from 'typeorm';
import { CHECKS_CHANNEL } from '../checks/checks-channel';
import { reopenScreening } from '../checks/screening-reopen';
import { enrollmentOpen, lockApplicantRow, lockOpenSession } from '../sessions/open-session-lock';
import type { SdkContext } from '../sessions/session-contexts';
import { HAS_OPEN_CHILD } from '../ubos/open-children';
import { recordReviewEvent } from '../reviews/review-events';
import { updateReturning } from '../reviews/reviews.repository';

/** Step states that count as "the user's data is in" (anything past `pending`, except `expired`). */
export const STEP_IN_STATES = ['submitted', 'in_review', 'completed', 'awaitingOperatorReview'];

/** Rows of an UPDATE … RETURNING (TypeORM answers `[rows, rowCount]` for UPDATE statements). */
@Injectable()
export class SdkRepository {
  constructor(private readonly dataSource: DataSource) {}

  /**
   * Saves SDK-entered identity values (level keys; `null` removes one) and records `applicant.updated`
   * (actor `sdk`) and `applicantPersonalInfoChanged`, in one transaction. Values the partner claimed in the
   * meantime are kept: the claim check runs again under the row lock. Answers the stored info.
   */
  async saveInfo(
    ctx: SdkContext,
    changes: Record<string, unknown>,
  ): Promise<{ info: Record<string, unknown>; refused: string[] } | 'closed'> {
    return this.dataSource.transaction(async (manager) => {
      const [current] = await manager.query<{ info: Record<string, unknown> }[]>(
        'SELECT info FROM applicants WHERE id = $1 FOR UPDATE',
        [ctx.applicant.id],
      );
      if (!(await enrollmentOpen(manager, ctx.applicant.id, ctx.enrollmentId))) return 'closed';
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
      const rescreened = await reopenScreening(manager, ctx.applicant.id, changed);
      await recordReviewEvent(manager, ctx.applicant, 'applicant.updated', 'sdk', {
        enrollmentId: ctx.enrollmentId,
        fields: changed,
        reopenedSteps: rescreened,
      });
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
  ): Promise<{ ok: true } | { ok: false; reviewStatus: string } | 'closed'> {
    const result = await this.dataSource.transaction(async (manager) => {
      if (!(await lockOpenSession(manager, ctx.applicant.id, ctx.enrollmentId))) return 'closed' as const;
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
      await recordReviewEvent(manager, ctx.applicant, 'step.submitted', 'sdk', {
        enrollmentId: ctx.enrollmentId,
        kind,
      });
      return { ok: true } as const;
    });
    if (result !== 'closed' && result.ok) this.wakeChecks();
    return result;
  }

  /**
   * Submits the enrollment, in one transaction: steps without user input (`serverKinds`) that are still
   * pending move to `submitted`; the enrollment becomes `submitted`, the applicant `pending` (a company with an
   * open UBO child stays `awaiting_user`, decision 0443);
   * `enrollment.submitted` is recorded and `applicantPending` written to the outbox. When no step is left to
   * check (every one already has its result), the enrollment becomes `completed` and the applicant keeps its
   * status: nothing would ever decide a `pending` (decision 0441). The enrollment row lock
   * makes a concurrent second submit change nothing. The checks are woken only when something is to check. The applicant's row is locked first, as every review write
   * locks it before the enrollment (completeReview, operator actions, expiry): the other order deadlocked
   * against an operator's decision or action on the same applicant.
   */
  async submitEnrollment(ctx: SdkContext, serverKinds: string[]): Promise<void> {
    const toCheck = await this.dataSource.transaction(async (manager) => {
      await lockApplicantRow(manager, ctx.applicant.id);
      const opened = await updateReturning<{ id: string }>(
        manager,
        `UPDATE enrollments SET status = 'submitted', updated_at = now()
          WHERE id = $1 AND status = 'open' RETURNING id`,
        [ctx.enrollmentId],
      );
      if (opened.length === 0) return false;
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
      const [checking] = await manager.query<{ steps: number }[]>(
        `SELECT count(*)::int AS steps FROM applicant_steps
          WHERE applicant_id = $1 AND review_status IN ('submitted', 'in_review', 'awaitingOperatorReview')`,
        [ctx.applicant.id],
      );
      const nothingToCheck = checking.steps === 0;
      await recordReviewEvent(manager, ctx.applicant, 'enrollment.submitted', 'sdk', {
        enrollmentId: ctx.enrollmentId,
        levelId: ctx.level.id,
        nothingToCheck,
      });
      if (nothingToCheck) {
        // Every step already has its result (a second link after the verdict, say): the enrollment is done
        // and the applicant keeps its status and verdict; nothing is pending (decision 0441).
        await manager.query(
          `UPDATE enrollments SET status = 'completed', completed_at = now(), updated_at = now() WHERE id = $1`,
          [ctx.enrollmentId],
        );
        return false;
      }
      // A company with an open UBO child stays awaiting_user: it waits for its children (decision 0443).
      await manager.query(
        `UPDATE applicants
            SET status = CASE WHEN ${HAS_OPEN_CHILD} THEN 'awaiting_user' ELSE 'pending' END,
                updated_at = now()
          WHERE id = $1`,
        [ctx.applicant.id],
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
      return true;
    });
    if (toCheck) this.wakeChecks();
  }

  /** Committed: the worker's step discovery looks for submitted steps now, not at its next poll (decision 0407). */
  private wakeChecks(): void {
    notifyChannel(this.dataSource, CHECKS_CHANNEL);
  }
}
