/**
 * How a review ends (decision 0443): a completed verdict (completeReview), a company's verdict held for its
 * open UBO children (concludeReview), the company roll-up when its round of children closes (rollUpCompany,
 * closeRound), and the operator hold (holdForOperator). One class, since completing a child's review rolls its
 * parent up, which may complete the parent's review.
 */
import { Injectable } from '@nestjs/common';
import { VERIFICATION_EVENTS } from '@tessera/contracts';
import { appendToOutbox } from '@tessera/platform';
import type { EntityManager } from 'typeorm';
import { toStepResults } from '../applicants/step-results';
import type { LevelEntity } from '../levels/entities/level.entity';
import {
  type ChildOutcome,
  isRequiredStep,
  type ReviewVerdict,
  verdictOf,
  withChildren,
} from './review-rules';
import { frozenBy, type LockedApplicant, ReviewsRepository, updateReturning } from './reviews.repository';
import { HAS_OPEN_CHILD, REOPEN_ROUND_OF_CHILD, TERMINAL_STATUSES } from '../ubos/open-children';
import { type ReviewActor, recordReviewEvent } from './review-events';

/** A child spawned from one of a company's UBO rows; `removed` when its row is (it left the roll-up). */
interface SpawnedChild extends ChildOutcome {
  removed: boolean;
}

/** Open: not `approved` or `rejected` yet (a deactivated or expired child is open). */
const isOpenChild = (child: ChildOutcome) => !TERMINAL_STATUSES.includes(child.status);

/** How a review that may end ends: completed, held for the company's open children, or still open. */
export type ReviewConclusion = 'completed' | 'held' | 'open';

@Injectable()
export class ReviewCompletionRepository {
  constructor(private readonly reviews: ReviewsRepository) {}

  /**
   * Ends the review if every required step is decided (verdictOf), inside the caller's transaction, which holds
   * the applicant's row lock and has checked frozenBy. A company waits for its UBO children (decision 0443):
   * - while one of its live spawned children is open, its verdict is held: it stays (or goes back to)
   *   `awaiting_user`, `review.held` is recorded, and the roll-up completes the review when the round closes;
   * - otherwise its verdict takes the children in (withChildren: a rejected child makes it RED).
   * 'open' while a required step is undecided.
   */
  async concludeReview(
    manager: EntityManager,
    applicant: LockedApplicant,
    level: Pick<LevelEntity, 'name' | 'steps'>,
    actorType: ReviewActor,
  ): Promise<ReviewConclusion> {
    const own = verdictOf(level, await this.reviews.steps(manager, applicant.id));
    if (!own) return 'open';
    const children =
      applicant.type === 'company'
        ? (await this.spawnedChildren(manager, applicant.id)).filter((child) => !child.removed)
        : [];
    const open = children.filter(isOpenChild).length;
    if (open > 0) {
      await manager.query(
        `UPDATE applicants SET status = 'awaiting_user', updated_at = now()
          WHERE id = $1 AND status <> 'awaiting_user'`,
        [applicant.id],
      );
      await recordReviewEvent(manager, applicant, 'review.held', actorType, { openChildren: open });
      return 'held';
    }
    await this.completeReview(manager, applicant, level, withChildren(own, children), actorType);
    return 'completed';
  }

  /**
   * Completes the applicant's review with `verdict`, inside the caller's transaction, which holds the
   * applicant's row lock (lockApplicant). Every path that ends a review goes through here: concludeReview
   * (operator step decisions, checks, sandbox reviews, activate), the blocklist, and a company's round closing:
   * - the applicant's status (approved / rejected) and reviewResult columns, reviewedAt, and `attempt` (the
   *   number of reviews completed, decision 0131);
   * - its current (latest) enrollment, when still open, becomes completed / rejected (`enrollment.completed`);
   * - the `applicant.approved` / `applicant.rejected` review event;
   * - the `applicantReviewed` outbox event (DECISIONS data shape, steps = the level's required steps);
   * - the parent roll-up when this is a UBO child whose siblings are all terminal now.
   * On a deactivated applicant (only a blocklist completes a review there; every other path refuses a frozen
   * applicant, decision 0435) the status stays `deactivated` and the verdict's status becomes the one that
   * activate brings back.
   */
  async completeReview(
    manager: EntityManager,
    applicant: LockedApplicant,
    level: Pick<LevelEntity, 'name' | 'steps'>,
    verdict: ReviewVerdict,
    actorType: ReviewActor,
  ): Promise<void> {
    const approved = verdict.reviewAnswer === 'GREEN';
    const [{ reviewedAt }] = await updateReturning<{ reviewedAt: Date }>(
      manager,
      `UPDATE applicants
          SET status = CASE WHEN status = 'deactivated' THEN status ELSE $2 END,
              status_before_deactivation = CASE WHEN status = 'deactivated' THEN $2
                                                ELSE status_before_deactivation END,
              review_answer = $3, review_reject_type = $4, reject_labels = $5::jsonb,
              moderation_comment = $6, reviewed_at = now(), updated_at = now(), attempt = attempt + 1
        WHERE id = $1
        RETURNING reviewed_at AS "reviewedAt"`,
      [
        applicant.id,
        approved ? 'approved' : 'rejected',
        verdict.reviewAnswer,
        verdict.reviewRejectType,
        JSON.stringify(verdict.rejectLabels),
        verdict.moderationComment,
      ],
    );
    const [enrollment] = await updateReturning<{ id: string }>(
      manager,
      `UPDATE enrollments SET status = $2, completed_at = now(), updated_at = now()
        WHERE id = (SELECT id FROM enrollments WHERE applicant_id = $1 ORDER BY created_at DESC, id DESC LIMIT 1)
          AND status IN ('open', 'submitted', 'in_review')
        RETURNING id`,
      [applicant.id, approved ? 'completed' : 'rejected'],
    );
    if (enrollment) {
      await recordReviewEvent(manager, applicant, 'enrollment.completed', actorType, {
        enrollmentId: enrollment.id,
        reviewAnswer: verdict.reviewAnswer,
      });
    }
    await recordReviewEvent(
      manager,
      applicant,
      approved ? 'applicant.approved' : 'applicant.rejected',
      actorType,
      {
        reviewAnswer: verdict.reviewAnswer,
        reviewRejectType: verdict.reviewRejectType,
        rejectLabels: verdict.rejectLabels,
      },
    );
    const steps = await this.reviews.steps(manager, applicant.id);
    await appendToOutbox(manager, [
      {
        tenantId: applicant.productId,
        eventType: VERIFICATION_EVENTS.APPLICANT_REVIEWED,
        entityType: 'applicant',
        entityId: applicant.id,
        occurredAt: reviewedAt,
        data: {
          applicantId: applicant.id,
          externalUserId: applicant.externalUserId,
          levelName: level.name,
          reviewStatus: 'completed',
          reviewResult: {
            reviewAnswer: verdict.reviewAnswer,
            reviewRejectType: verdict.reviewRejectType,
            rejectLabels: verdict.rejectLabels,
            moderationComment: verdict.moderationComment,
          },
          steps: toStepResults(level, steps, applicant.createdAt),
          sandbox: applicant.sandbox,
          createdAtUtc: new Date(reviewedAt).toISOString(),
        },
      },
    ]);
    if (!applicant.parentApplicantId) return;
    if (!TERMINAL_STATUSES.includes(applicant.status)) {
      await this.rollUpCompany(manager, applicant.parentApplicantId);
    } else if (
      applicant.reviewAnswer !== verdict.reviewAnswer ||
      applicant.reviewRejectType !== verdict.reviewRejectType
    ) {
      // A live child's verdict changed after its round closed (an approved owner blocklisted, a RETRY one made
      // FINAL): the company's round opens and, every child being terminal, closes again at once, so the
      // company's verdict takes the new one in instead of staying approved beside a rejected owner (0443).
      const [, reopened] = await manager.query<[unknown[], number]>(REOPEN_ROUND_OF_CHILD, [applicant.id]);
      if (reopened > 0) await this.rollUpCompany(manager, applicant.parentApplicantId);
    }
  }

  /**
   * Contract: the parent company verification is closed when every spawned child is terminal. Runs when a
   * child becomes terminal, when a UBO row is removed (its child leaves the roll-up, so the children left may
   * all be terminal, or none may be left), and when a child comes back terminal from a deactivation
   * (afterActivate). The parent leaves `awaiting_user` (for `pending`; a deactivated parent, in the status that
   * activate restores), `companyChildrenCompleted` goes out once per round, and the company's own review
   * follows (closeRound). The parent's row lock serialises siblings completing at the same time.
   */
  async rollUpCompany(manager: EntityManager, parentId: string): Promise<void> {
    const parent = await this.reviews.lockApplicant(manager, parentId);
    if (!parent) return;
    const children = await this.spawnedChildren(manager, parentId);
    // Closed when no live child is open: also when the partner removed the rows of the last open ones, even if
    // no live child is left. A company that never spawned has no round to close.
    if (children.length === 0 || children.some((c) => !c.removed && isOpenChild(c))) return;
    // The status leaves awaiting_user whenever no live child is open; the event is guarded (decision 0140):
    // only the completion that sets children_completed_at fires it, so a re-review, or a sibling that finished
    // at the same moment, never repeats it within a round.
    const [closed] = await updateReturning<{ updatedAt: Date; levelName: string | null; first: boolean }>(
      manager,
      `UPDATE applicants a
          SET status = CASE WHEN a.status = 'awaiting_user' THEN 'pending' ELSE a.status END,
              status_before_deactivation = CASE WHEN a.status_before_deactivation = 'awaiting_user' THEN 'pending'
                                                ELSE a.status_before_deactivation END,
              children_completed_at = coalesce(a.children_completed_at, now()), updated_at = now()
         FROM (SELECT children_completed_at IS NULL AS first FROM applicants WHERE id = $1) round
        WHERE a.id = $1
          AND (round.first OR 'awaiting_user' IN (a.status, a.status_before_deactivation))
        RETURNING a.updated_at AS "updatedAt", (SELECT name FROM levels WHERE id = a.level_id) AS "levelName",
                  round.first`,
      [parentId],
    );
    if (closed?.first) {
      await appendToOutbox(manager, [
        {
          tenantId: parent.productId,
          eventType: VERIFICATION_EVENTS.COMPANY_CHILDREN_COMPLETED,
          entityType: 'applicant',
          entityId: parent.id,
          data: {
            applicantId: parent.id,
            externalUserId: parent.externalUserId,
            levelName: closed.levelName,
            sandbox: parent.sandbox,
            createdAtUtc: new Date(closed.updatedAt).toISOString(),
          },
        },
      ]);
    }
    await this.closeRound(
      manager,
      parent,
      children.filter((child) => !child.removed),
    );
  }

  /**
   * The company's own review once its round of children has closed (decision 0443), after
   * `companyChildrenCompleted`: a verdict held for the children completes now, with them (withChildren); a
   * company whose own steps are not all decided has just left `awaiting_user` for `pending`, and goes on hold
   * (`in_review`, `applicantOnHold`) if a required step waits for an operator. A frozen company takes no verdict
   * (decision 0435: activate gives it), and a company with a verdict keeps it.
   */
  private async closeRound(manager: EntityManager, parent: LockedApplicant, children: ChildOutcome[]) {
    if (frozenBy(parent) || TERMINAL_STATUSES.includes(parent.status) || !parent.levelId) return;
    const [level] = await manager.query<Pick<LevelEntity, 'name' | 'steps'>[]>(
      'SELECT name, steps FROM levels WHERE id = $1',
      [parent.levelId],
    );
    if (!level) return;
    const steps = await this.reviews.steps(manager, parent.id);
    const own = verdictOf(level, steps);
    if (own) {
      await this.completeReview(manager, parent, level, withChildren(own, children), 'system');
      return;
    }
    const waiting = steps.find(
      (step) => step.reviewStatus === 'awaitingOperatorReview' && isRequiredStep(level, step.kind),
    );
    if (waiting) await this.holdForOperator(manager, parent, level, waiting.kind);
  }

  /** Every child spawned from the company's UBO rows, `removed` when its row is (it left the roll-up). */
  private spawnedChildren(manager: EntityManager, parentId: string): Promise<SpawnedChild[]> {
    return manager.query<SpawnedChild[]>(
      `SELECT c.status, c.review_reject_type AS "reviewRejectType", u.removed
         FROM ubos u JOIN applicants c ON c.id = u.linked_applicant_id
        WHERE u.parent_applicant_id = $1`,
      [parentId],
    );
  }

  /**
   * A step waits for an operator: the applicant goes `in_review` and the partner hears `applicantOnHold` once.
   * A company with open UBO children stays `awaiting_user` (decision 0443); the roll-up puts it on hold when
   * the round closes (closeRound).
   */
  async holdForOperator(
    manager: EntityManager,
    applicant: LockedApplicant,
    level: Pick<LevelEntity, 'name'>,
    kind: string,
  ): Promise<void> {
    const [moved] = await updateReturning<{ updatedAt: Date }>(
      manager,
      `UPDATE applicants SET status = 'in_review', updated_at = now()
        WHERE id = $1 AND status <> ALL($2::text[]) AND NOT ${HAS_OPEN_CHILD}
        RETURNING updated_at AS "updatedAt"`,
      [applicant.id, ['in_review', ...TERMINAL_STATUSES, 'deactivated']],
    );
    if (!moved) return;
    await recordReviewEvent(manager, applicant, 'applicant.sent_to_review', 'system', { kind });
    await appendToOutbox(manager, [
      {
        tenantId: applicant.productId,
        eventType: VERIFICATION_EVENTS.APPLICANT_ON_HOLD,
        entityType: 'applicant',
        entityId: applicant.id,
        data: {
          applicantId: applicant.id,
          externalUserId: applicant.externalUserId,
          levelName: level.name,
          reviewStatus: 'onHold',
          sandbox: applicant.sandbox,
          createdAtUtc: new Date(moved.updatedAt).toISOString(),
        },
      },
    ]);
  }
}
