/**
 * The operator's actions on an applicant (decision 0132): reset, deactivate, activate (and the verdict it
 * brings back, afterActivate), blocklist and unblock.
 */
import { Injectable } from '@nestjs/common';
import { type ApplicantAction, VERIFICATION_EVENTS } from '@tessera/contracts';
import { appendToOutbox } from '@tessera/platform';
import { DataSource, type EntityManager } from 'typeorm';
import type { LevelEntity } from '../levels/entities/level.entity';
import { ReviewCompletionRepository } from './review-completion.repository';
import { TERMINAL_STATUSES } from '../ubos/open-children';
import { frozenBy, ReviewsRepository } from './reviews.repository';
import { HAS_OPEN_CHILD } from '../ubos/open-children';
import { recordReviewEvent } from './review-events';

/** The partner-visible review event of each operator action. */
const ACTION_HISTORY_EVENTS: Record<ApplicantAction, string> = {
  reset: 'applicant.reset',
  deactivate: 'applicant.deactivated',
  activate: 'applicant.activated',
  blocklist: 'applicant.blocklisted',
  unblock: 'applicant.blocklist_removed',
};

@Injectable()
export class ApplicantActionsRepository {
  constructor(
    private readonly dataSource: DataSource,
    private readonly reviews: ReviewsRepository,
    private readonly completion: ReviewCompletionRepository,
  ) {}

  /**
   * An operator action on an applicant (decision 0132), in one transaction with its review event and outbox
   * event. 'conflict' when the applicant is not in a state the action applies to.
   * - reset: every step back to `pending` (rows removed), review columns cleared, riskLevel `unknown`, status
   *   `init`, open enrollments `failed`; `applicant.reset`, `applicantReset`.
   * - deactivate: status `deactivated` (the previous one kept), open enrollments `failed`;
   *   `applicant.deactivated`, `applicantDeactivated`.
   * - activate: the status before the deactivation; `applicant.activated`, `applicantActivated`; then the
   *   verdict of the steps recorded meanwhile, when they are all decided (afterActivate).
   * - blocklist: the flag (no new session link), and the review completed RED FINAL `BLOCKLIST` (applicant
   *   `rejected`, or still `deactivated` and `rejected` once activated; `applicantReviewed`);
   *   `applicant.blocklisted`.
   * - unblock: the flag cleared; `applicant.blocklist_removed` (the verdict stays; a reset reopens).
   */
  async applicantAction(input: {
    applicantId: string;
    action: ApplicantAction;
    reason: string | null;
    level: LevelEntity | null;
  }): Promise<'done' | 'conflict'> {
    const { action, reason } = input;
    return this.dataSource.transaction(async (manager) => {
      const applicant = await this.reviews.lockApplicant(manager, input.applicantId);
      if (!applicant) return 'conflict';
      const failOpenEnrollments = () =>
        manager.query(
          `UPDATE enrollments SET status = 'failed', updated_at = now()
            WHERE applicant_id = $1 AND status IN ('open', 'submitted', 'in_review')`,
          [applicant.id],
        );
      let eventType: string | null = null;
      switch (action) {
        case 'reset':
          if (applicant.status === 'deactivated') return 'conflict';
          await manager.query('DELETE FROM applicant_steps WHERE applicant_id = $1', [applicant.id]);
          await manager.query(
            `UPDATE applicants SET status = CASE WHEN ${HAS_OPEN_CHILD} THEN 'awaiting_user' ELSE 'init' END,
                    risk_level = 'unknown', review_answer = NULL,
                    review_reject_type = NULL, reject_labels = '[]', moderation_comment = NULL, reviewed_at = NULL,
                    updated_at = now()
              WHERE id = $1`,
            [applicant.id],
          );
          await failOpenEnrollments();
          eventType = VERIFICATION_EVENTS.APPLICANT_RESET;
          break;
        case 'deactivate':
          if (applicant.status === 'deactivated') return 'conflict';
          await manager.query(
            `UPDATE applicants SET status_before_deactivation = status, status = 'deactivated', updated_at = now()
              WHERE id = $1`,
            [applicant.id],
          );
          await failOpenEnrollments();
          eventType = VERIFICATION_EVENTS.APPLICANT_DEACTIVATED;
          break;
        case 'activate':
          if (applicant.status !== 'deactivated') return 'conflict';
          await manager.query(
            `UPDATE applicants SET status = coalesce(status_before_deactivation, 'init'),
                    status_before_deactivation = NULL, updated_at = now()
              WHERE id = $1`,
            [applicant.id],
          );
          eventType = VERIFICATION_EVENTS.APPLICANT_ACTIVATED;
          break;
        case 'blocklist':
          if (applicant.blocklisted) return 'conflict';
          await manager.query('UPDATE applicants SET blocklisted = true, updated_at = now() WHERE id = $1', [
            applicant.id,
          ]);
          await failOpenEnrollments();
          break;
        case 'unblock':
          if (!applicant.blocklisted) return 'conflict';
          await manager.query('UPDATE applicants SET blocklisted = false, updated_at = now() WHERE id = $1', [
            applicant.id,
          ]);
          break;
      }
      await recordReviewEvent(manager, applicant, ACTION_HISTORY_EVENTS[action], 'operator', {
        reason,
      });
      // Deactivated or not: a blocklisted applicant holds the blocklist's verdict, so activate cannot bring back
      // an earlier approval.
      if (action === 'blocklist' && input.level) {
        await this.completion.completeReview(
          manager,
          applicant,
          input.level,
          {
            reviewAnswer: 'RED',
            reviewRejectType: 'FINAL',
            rejectLabels: ['BLOCKLIST'],
            moderationComment: reason,
          },
          'operator',
        );
      }
      if (eventType) {
        const [after] = await manager.query<{ status: string; updatedAt: Date; levelName: string | null }[]>(
          `SELECT a.status, a.updated_at AS "updatedAt", l.name AS "levelName"
             FROM applicants a LEFT JOIN levels l ON l.id = a.level_id WHERE a.id = $1`,
          [applicant.id],
        );
        await appendToOutbox(manager, [
          {
            tenantId: applicant.productId,
            eventType,
            entityType: 'applicant',
            entityId: applicant.id,
            data: {
              applicantId: applicant.id,
              externalUserId: applicant.externalUserId,
              levelName: after.levelName,
              status: after.status,
              reason,
              sandbox: applicant.sandbox,
              createdAtUtc: new Date(after.updatedAt).toISOString(),
            },
          },
        ]);
      }
      if (action === 'activate') await this.afterActivate(manager, applicant.id, input.level);
      return 'done';
    });
  }

  /**
   * After activate, the verdict waiting on steps recorded while the applicant was frozen (decision 0435): when
   * the restored status has no verdict and every required step is decided, the review completes now (after
   * `applicantActivated`, so the partner hears the activation first). Nothing else would: an operator decision
   * finds no step to decide, and a new link reopens only RETRY and expired steps. A UBO child that comes back
   * `approved` or `rejected` runs its parent's roll-up, as its review completion did.
   */
  private async afterActivate(manager: EntityManager, applicantId: string, level: LevelEntity | null) {
    const applicant = await this.reviews.lockApplicant(manager, applicantId);
    if (!applicant || frozenBy(applicant)) return;
    if (TERMINAL_STATUSES.includes(applicant.status)) {
      // A UBO child back to its verdict: while deactivated it held its parent's round open.
      if (applicant.parentApplicantId)
        await this.completion.rollUpCompany(manager, applicant.parentApplicantId);
      return;
    }
    if (level && applicant.levelId === level.id) {
      await this.completion.concludeReview(manager, applicant, level, 'operator');
    }
  }
}
