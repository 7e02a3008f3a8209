/**
 * Decisions on an applicant's steps that may end its review: the operator's decision on one step (decideStep)
 * and the sandbox review (sandboxReview).
 */
import { Injectable } from '@nestjs/common';
import type { StepReviewInput } from '@tessera/contracts';
import { DataSource } from 'typeorm';
import type { LevelEntity } from '../levels/entities/level.entity';
import { isRequiredStep, type StepOutcome } from './review-rules';
import { ReviewCompletionRepository } from './review-completion.repository';
import { frozenBy, ReviewsRepository, STEP_COLUMNS, updateReturning } from './reviews.repository';
import { type ReviewActor, recordReviewEvent } from './review-events';

export type StepDecisionResult =
  | { outcome: 'decided'; step: StepOutcome; reviewCompleted: boolean }
  /** The step is in a state that takes no decision (no row = pending). */
  | { outcome: 'not_decidable'; reviewStatus: string }
  /** The applicant moved to another level between the lookup and the transaction. */
  | { outcome: 'level_changed' }
  /** The applicant takes no verdict now (frozenBy). */
  | { outcome: 'frozen'; by: 'deactivated' | 'blocklisted' };

@Injectable()
export class StepDecisionsRepository {
  constructor(
    private readonly dataSource: DataSource,
    private readonly reviews: ReviewsRepository,
    private readonly completion: ReviewCompletionRepository,
  ) {}

  /**
   * Records a decision on one step, in one transaction: the step result (only from a state that takes a
   * decision), the `step.reviewed` review event, and — when that completes the last required step of the
   * level — the applicant's review (concludeReview). The applicant row lock serialises concurrent decisions,
   * so exactly one of them sees every required step completed.
   */
  async decideStep(input: {
    applicantId: string;
    level: LevelEntity;
    kind: string;
    decision: StepReviewInput;
    acceptedStatuses: readonly string[];
    actorType: ReviewActor;
  }): Promise<StepDecisionResult> {
    const { level, kind, decision } = input;
    return this.dataSource.transaction(async (manager) => {
      const applicant = await this.reviews.lockApplicant(manager, input.applicantId);
      if (!applicant || applicant.levelId !== level.id) return { outcome: 'level_changed' };
      const by = frozenBy(applicant);
      if (by) return { outcome: 'frozen', by };
      const [current] = await manager.query<
        { id: string; reviewStatus: string; enrollmentId: string | null }[]
      >(
        `SELECT id, review_status AS "reviewStatus", enrollment_id AS "enrollmentId"
           FROM applicant_steps WHERE applicant_id = $1 AND kind = $2 FOR UPDATE`,
        [applicant.id, kind],
      );
      if (!current || !input.acceptedStatuses.includes(current.reviewStatus)) {
        return { outcome: 'not_decidable', reviewStatus: current?.reviewStatus ?? 'pending' };
      }
      const red = decision.reviewAnswer === 'RED';
      const result = {
        reviewAnswer: decision.reviewAnswer,
        reviewRejectType: red ? (decision.reviewRejectType ?? null) : null,
        rejectLabels: red ? [...new Set(decision.rejectLabels ?? [])] : [],
        moderationComment: decision.moderationComment ?? null,
        clientComment: decision.clientComment ?? null,
      };
      const [step] = await updateReturning<StepOutcome>(
        manager,
        `UPDATE applicant_steps
            SET review_status = 'completed', review_answer = $2, review_reject_type = $3, reject_labels = $4::jsonb,
                moderation_comment = $5, client_comment = $6, updated_at = now()
          WHERE id = $1
          RETURNING ${STEP_COLUMNS}`,
        [
          current.id,
          result.reviewAnswer,
          result.reviewRejectType,
          JSON.stringify(result.rejectLabels),
          result.moderationComment,
          result.clientComment,
        ],
      );
      await recordReviewEvent(manager, applicant, 'step.reviewed', input.actorType, {
        kind,
        enrollmentId: current.enrollmentId,
        previousStatus: current.reviewStatus,
        ...result,
      });
      const reviewCompleted =
        isRequiredStep(level, kind) &&
        (await this.completion.concludeReview(manager, applicant, level, input.actorType)) === 'completed';
      return { outcome: 'decided', step, reviewCompleted };
    });
  }

  /**
   * The sandbox review (DECISIONS "Sandbox"): decides the given steps as `completed` whatever their state, then
   * ends the review exactly as production does (concludeReview), in one transaction: 'held' for a company with
   * an open UBO child. 'level_changed' when the applicant moved to another level meanwhile; 'incomplete' when a
   * required step is still open.
   */
  async sandboxReview(input: {
    applicantId: string;
    level: LevelEntity;
    decisions: {
      kind: string;
      result: Omit<StepOutcome, 'kind' | 'reviewStatus' | 'updatedAt' | 'clientComment'>;
    }[];
  }): Promise<'reviewed' | 'held' | 'level_changed' | 'incomplete' | 'deactivated' | 'blocklisted'> {
    const { level } = input;
    return this.dataSource.transaction(async (manager) => {
      const applicant = await this.reviews.lockApplicant(manager, input.applicantId);
      if (!applicant || applicant.levelId !== level.id) return 'level_changed';
      const by = frozenBy(applicant);
      if (by) return by;
      for (const { kind, result } of input.decisions) {
        await manager.query(
          `INSERT INTO applicant_steps (applicant_id, kind, review_status, review_answer, review_reject_type,
                                        reject_labels, moderation_comment)
           VALUES ($1, $2, 'completed', $3, $4, $5::jsonb, $6)
           ON CONFLICT (applicant_id, kind) DO UPDATE
             SET review_status = 'completed', review_answer = excluded.review_answer,
                 review_reject_type = excluded.review_reject_type, reject_labels = excluded.reject_labels,
                 moderation_comment = excluded.moderation_comment, client_comment = NULL, updated_at = now()`,
          [
            applicant.id,
            kind,
            result.reviewAnswer,
            result.reviewRejectType,
            JSON.stringify(result.rejectLabels),
            result.moderationComment,
          ],
        );
        await recordReviewEvent(manager, applicant, 'step.reviewed', 'partner', {
          kind,
          sandbox: true,
          ...result,
        });
      }
      const conclusion = await this.completion.concludeReview(manager, applicant, level, 'partner');
      if (conclusion === 'open') return 'incomplete';
      return conclusion === 'held' ? 'held' : 'reviewed';
    });
  }
}
