import { Injectable } from '@nestjs/common';
import type { PresentationParams } from '@tessera/contracts';
import { DataSource, type EntityManager } from 'typeorm';
import { recordReviewEvent } from '../reviews/review-events';
import { REOPEN_ROUND_OF_CHILD } from '../ubos/open-children';

export interface NewEnrollment {
  productId: string;
  applicantId: string;
  levelId: string;
  shortCode: string;
  presentation: PresentationParams;
  ttlDays: number;
}

export interface EnrollmentRow {
  id: string;
  productId: string;
  applicantId: string;
  levelId: string;
  levelName: string;
  shortCode: string;
  status: string;
  presentation: PresentationParams;
  expiresAt: Date;
  /** The applicant's current level and status: a link to a level it has left, or of a deactivated one, is dead. */
  applicant: { levelId: string | null; status: string };
}

@Injectable()
export class SessionsRepository {
  constructor(private readonly dataSource: DataSource) {}

  /**
   * Opens an enrollment (moving the applicant to the level when it was on another one) and records
   * `enrollment.created`, in one transaction.
   */
  open(input: NewEnrollment): Promise<{ id: string; expiresAt: Date }> {
    return this.dataSource.transaction((manager) => this.openIn(manager, input));
  }

  /** `open` inside the caller's transaction (spawn-kyc and regenerate-link write the UBO row with it). */
  async openIn(manager: EntityManager, input: NewEnrollment): Promise<{ id: string; expiresAt: Date }> {
    {
      await manager.query(
        `UPDATE applicants SET level_id = $2, updated_at = now()
          WHERE id = $1 AND level_id IS DISTINCT FROM $2`,
        [input.applicantId, input.levelId],
      );
      // A RED RETRY step (and an expired one) opens again for this session; FINAL never does.
      const [reopened] = await manager.query<[{ kind: string }[], number]>(
        `UPDATE applicant_steps
            SET review_status = 'pending', review_answer = NULL, review_reject_type = NULL, reject_labels = '[]',
                moderation_comment = NULL, client_comment = NULL, check_result = NULL, enrollment_id = NULL,
                updated_at = now()
          WHERE applicant_id = $1
            AND ((review_status = 'completed' AND review_answer = 'RED' AND review_reject_type = 'RETRY')
                 OR review_status = 'expired')
            AND NOT EXISTS (SELECT 1 FROM applicants
                             WHERE id = $1 AND status = 'rejected' AND review_reject_type = 'FINAL')
          RETURNING kind`,
        [input.applicantId],
      );
      if (reopened.length > 0) {
        const [moved] = await manager.query<[{ before: string }[], number]>(
          `UPDATE applicants a SET status = 'init', updated_at = now()
             FROM applicants before
            WHERE a.id = $1 AND before.id = a.id AND a.status IN ('rejected', 'expired')
            RETURNING before.status AS "before"`,
          [input.applicantId],
        );
        // A UBO child taken out of its verdict opens its company's round again, whichever call minted the link
        // (regenerate-link, a spawn-kyc repeat, the child's own session link): the company waits in
        // `awaiting_user` and takes the child's new verdict in when the round closes (decision 0443).
        if (moved[0]?.before === 'rejected') await manager.query(REOPEN_ROUND_OF_CHILD, [input.applicantId]);
      }
      // One link at a time writes to an applicant (decision 0441): its other open enrollments are replaced, so
      // an older link can no longer submit over a verdict or hold back the steps it submitted (they are
      // checked now, as the enrollment is no longer open).
      const [replaced] = await manager.query<[{ id: string }[], number]>(
        `UPDATE enrollments SET status = 'replaced', updated_at = now()
          WHERE applicant_id = $1 AND status = 'open'
          RETURNING id`,
        [input.applicantId],
      );
      const [row] = await manager.query<{ id: string; expiresAt: Date }[]>(
        `INSERT INTO enrollments (product_id, applicant_id, level_id, short_code, presentation, expires_at)
         VALUES ($1, $2, $3, $4, $5::jsonb, now() + make_interval(days => $6::int))
         RETURNING id, expires_at AS "expiresAt"`,
        [
          input.productId,
          input.applicantId,
          input.levelId,
          input.shortCode,
          JSON.stringify(input.presentation),
          input.ttlDays,
        ],
      );
      await recordReviewEvent(
        manager,
        { id: input.applicantId, productId: input.productId },
        'enrollment.created',
        'partner',
        {
          enrollmentId: row.id,
          levelId: input.levelId,
          reopenedSteps: reopened.map((step) => step.kind),
          replacedEnrollments: replaced.map((enrollment) => enrollment.id),
        },
      );
      return row;
    }
  }

  async findByShortCode(shortCode: string): Promise<EnrollmentRow | undefined> {
    const [row] = await this.dataSource.query<EnrollmentRow[]>(
      `SELECT e.id, e.product_id AS "productId", e.applicant_id AS "applicantId", e.level_id AS "levelId",
              l.name AS "levelName", e.short_code AS "shortCode", e.status, e.presentation,
              e.expires_at AS "expiresAt", jsonb_build_object('levelId', a.level_id, 'status', a.status) AS applicant
         FROM enrollments e JOIN levels l ON l.id = e.level_id JOIN applicants a ON a.id = e.applicant_id
        WHERE e.short_code = $1`,
      [shortCode],
    );
    return row;
  }
}
