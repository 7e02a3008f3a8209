import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { HAS_OPEN_CHILD } from '../ubos/open-children';
import { recordReviewEvent } from '../reviews/review-events';

export interface SubmittedStep {
  stepId: string;
  applicantId: string;
  kind: string;
  submittedAt: string;
}

/** The worker's sweeps: submitted steps to check, expired enrollments to close. */
@Injectable()
export class ChecksRepository {
  constructor(private readonly dataSource: DataSource) {}

  /**
   * Steps waiting for their check: `submitted`, and their enrollment submitted (the SDK's final submit) or
   * without an enrollment. Oldest first. `submittedAt` keeps the microseconds so that each submission of a
   * step has its own job id.
   */
  submittedSteps(limit: number): Promise<SubmittedStep[]> {
    return this.dataSource.query<SubmittedStep[]>(
      `SELECT s.id AS "stepId", s.applicant_id AS "applicantId", s.kind,
              to_char(s.updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS "submittedAt"
         FROM applicant_steps s LEFT JOIN enrollments e ON e.id = s.enrollment_id
        WHERE s.review_status = 'submitted' AND (e.id IS NULL OR e.status <> 'open')
        ORDER BY s.updated_at
        LIMIT $1`,
      [limit],
    );
  }

  /**
   * Expires up to `limit` open enrollments whose link has expired, each in its own transaction (the
   * applicant's row lock first, as every review write takes it):
   * - the enrollment becomes `expired` and `enrollment.expired` is recorded;
   * - when it is the applicant's latest enrollment, every step of its level still waiting for this
   *   enrollment becomes `expired` (`pending`, or `submitted` under it; steps without progress get an
   *   `expired` row), and an applicant still waiting for the user (`init`, `awaiting_user`) becomes `expired`
   *   (not a company waiting for its open UBO children: decision 0443).
   *   Steps an earlier, submitted enrollment put under review keep going (decision 0131: enrollments already
   *   submitted do not expire), as do results.
   * Returns how many enrollments expired.
   */
  async expireEnrollments(limit: number): Promise<number> {
    const due = await this.dataSource.query<{ id: string; applicantId: string }[]>(
      `SELECT id, applicant_id AS "applicantId" FROM enrollments
        WHERE status = 'open' AND expires_at <= now() ORDER BY expires_at LIMIT $1`,
      [limit],
    );
    let expired = 0;
    for (const enrollment of due) {
      const done = await this.dataSource.transaction(async (manager) => {
        const [applicant] = await manager.query<{ id: string; productId: string }[]>(
          `SELECT id, product_id AS "productId" FROM applicants WHERE id = $1 FOR UPDATE`,
          [enrollment.applicantId],
        );
        const [rows] = await manager.query<[{ levelId: string; latest: boolean }[], number]>(
          `UPDATE enrollments e SET status = 'expired', updated_at = now()
            WHERE e.id = $1 AND e.status = 'open' AND e.expires_at <= now()
            RETURNING e.level_id AS "levelId",
              NOT EXISTS (SELECT 1 FROM enrollments n WHERE n.applicant_id = e.applicant_id
                           AND (n.created_at, n.id) > (e.created_at, e.id)) AS latest`,
          [enrollment.id],
        );
        const row = rows[0];
        if (!applicant || !row) return false;
        let steps: string[] = [];
        if (row.latest) {
          // INSERT ... RETURNING answers the rows themselves (UPDATE answers [rows, count]).
          const expiredSteps = await manager.query<{ kind: string }[]>(
            `INSERT INTO applicant_steps (applicant_id, enrollment_id, kind, review_status)
             SELECT $1, $2, step->>'kind', 'expired'
               FROM levels l, jsonb_array_elements(l.steps) step WHERE l.id = $3
             ON CONFLICT (applicant_id, kind) DO UPDATE
               SET review_status = 'expired', enrollment_id = excluded.enrollment_id, updated_at = now()
               WHERE applicant_steps.review_status IN ('pending', 'submitted')
                 AND (applicant_steps.enrollment_id IS NULL OR applicant_steps.enrollment_id = $2)
             RETURNING kind`,
            [applicant.id, enrollment.id, row.levelId],
          );
          steps = expiredSteps.map((s) => s.kind);
          await manager.query(
            `UPDATE applicants SET status = 'expired', updated_at = now()
              WHERE id = $1 AND status IN ('init', 'awaiting_user') AND NOT ${HAS_OPEN_CHILD}`,
            [applicant.id],
          );
        }
        await recordReviewEvent(manager, applicant, 'enrollment.expired', 'system', {
          enrollmentId: enrollment.id,
          steps,
        });
        return true;
      });
      if (done) expired++;
    }
    return expired;
  }
}
