/**
 * The checks worker's path through a step: claiming it (claimStep), reading what the check needs
 * (checkSubject), and writing the check's result (recordCheck), which holds the applicant for an operator or
 * ends its review.
 */
import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { LevelEntity } from '../levels/entities/level.entity';
import { isRequiredStep, type StepOutcome } from './review-rules';
import { ReviewCompletionRepository } from './review-completion.repository';
import { frozenBy, ReviewsRepository, STEP_COLUMNS, updateReturning } from './reviews.repository';
import { recordReviewEvent } from './review-events';

const RISK_ORDER = ['unknown', 'low', 'medium', 'high'];

/** What an automatic check decided on a step. */
export interface CheckResult {
  /** REVIEW: the check cannot decide; the step waits for an operator (`awaitingOperatorReview`). */
  decision: 'GREEN' | 'RED' | 'REVIEW';
  reviewRejectType?: 'FINAL' | 'RETRY';
  rejectLabels: string[];
  moderationComment: string | null;
  /** Kept on the step (`check_result`) for the operator: matches, missing items, measurements. */
  details: Record<string, unknown>;
  /** What the check says of the applicant's risk; the applicant's riskLevel only goes up. */
  risk: 'low' | 'medium' | 'high';
  /** The review-history event of this check (`aml.run`, `adverse_media.run`, `step.checked`). */
  historyEvent: string;
}

export interface CheckSubject {
  stepId: string;
  kind: string;
  enrollmentId: string | null;
  reviewStatus: string;
  applicantId: string;
  productId: string;
  type: 'individual' | 'company';
  levelId: string | null;
  info: Record<string, unknown>;
}

@Injectable()
export class CheckResultsRepository {
  constructor(
    private readonly dataSource: DataSource,
    private readonly reviews: ReviewsRepository,
    private readonly completion: ReviewCompletionRepository,
  ) {}

  /**
   * Starts the check of a submitted step: `submitted` -> `in_review` (compare-and-set). 'claimed' also when
   * the step is `in_review` already (a redelivery after a crash mid-check: the check is run again and only one
   * result is written); 'done' when the step has moved on (a duplicate job).
   */
  async claimStep(stepId: string): Promise<'claimed' | 'done'> {
    const [rows] = await this.dataSource.query<[{ id: string }[], number]>(
      `UPDATE applicant_steps SET review_status = 'in_review', updated_at = now()
        WHERE id = $1 AND review_status = 'submitted' RETURNING id`,
      [stepId],
    );
    if (rows.length > 0) return 'claimed';
    const [current] = await this.dataSource.query<{ reviewStatus: string }[]>(
      `SELECT review_status AS "reviewStatus" FROM applicant_steps WHERE id = $1`,
      [stepId],
    );
    return current?.reviewStatus === 'in_review' ? 'claimed' : 'done';
  }

  /** The step and its applicant as a check needs them. */
  async checkSubject(stepId: string): Promise<CheckSubject | undefined> {
    const [row] = await this.dataSource.query<CheckSubject[]>(
      `SELECT s.id AS "stepId", s.kind, s.enrollment_id AS "enrollmentId", s.review_status AS "reviewStatus",
              a.id AS "applicantId", a.product_id AS "productId", a.type, a.level_id AS "levelId", a.info
         FROM applicant_steps s JOIN applicants a ON a.id = s.applicant_id
        WHERE s.id = $1`,
      [stepId],
    );
    return row;
  }

  /**
   * Writes a check's result in one transaction: the step (only from `in_review` and still on the submission the
   * check read, `enrollmentId`: a second writer of the same step finds nothing to update, and a slow check of
   * an earlier submission does not write over the step submitted again since on a newer link), the review event (`aml.run`, `adverse_media.run` or `step.checked`), the
   * applicant's riskLevel (never lowered), and then either the hold (`awaitingOperatorReview`: applicant
   * `in_review`, `applicant.sent_to_review`, `applicantOnHold`) or, when the step completes the level, the
   * applicant's review (concludeReview), unless the applicant is deactivated or blocklisted (frozenBy).
   */
  async recordCheck(input: {
    stepId: string;
    applicantId: string;
    enrollmentId: string | null;
    level: LevelEntity;
    result: CheckResult;
  }): Promise<'recorded' | 'stale'> {
    const { level, result } = input;
    return this.dataSource.transaction(async (manager) => {
      const applicant = await this.reviews.lockApplicant(manager, input.applicantId);
      if (!applicant || applicant.levelId !== level.id) return 'stale';
      const hold = result.decision === 'REVIEW';
      const red = result.decision === 'RED';
      const [step] = await updateReturning<StepOutcome & { enrollmentId: string | null }>(
        manager,
        `UPDATE applicant_steps
            SET review_status = $2, review_answer = $3, review_reject_type = $4, reject_labels = $5::jsonb,
                moderation_comment = $6, client_comment = NULL, check_result = $7::jsonb, updated_at = now()
          WHERE id = $1 AND review_status = 'in_review' AND enrollment_id IS NOT DISTINCT FROM $8
          RETURNING ${STEP_COLUMNS}, enrollment_id AS "enrollmentId"`,
        [
          input.stepId,
          hold ? 'awaitingOperatorReview' : 'completed',
          hold ? null : result.decision,
          red ? (result.reviewRejectType ?? 'RETRY') : null,
          JSON.stringify(red ? result.rejectLabels : []),
          hold ? null : result.moderationComment,
          JSON.stringify(result.details),
          input.enrollmentId,
        ],
      );
      if (!step) return 'stale';
      await recordReviewEvent(manager, applicant, result.historyEvent, 'system', {
        kind: step.kind,
        enrollmentId: step.enrollmentId,
        outcome: result.decision,
        rejectLabels: step.rejectLabels,
      });
      await manager.query(
        `UPDATE applicants SET risk_level = $2, updated_at = now()
          WHERE id = $1 AND array_position($3::text[], risk_level) < array_position($3::text[], $2::text)`,
        [applicant.id, result.risk, RISK_ORDER],
      );
      if (hold) {
        await this.completion.holdForOperator(manager, applicant, level, step.kind);
      } else if (isRequiredStep(level, step.kind) && !frozenBy(applicant)) {
        await this.completion.concludeReview(manager, applicant, level, 'system');
      }
      return 'recorded';
    });
  }
}
