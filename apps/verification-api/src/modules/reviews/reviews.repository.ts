import { Injectable } from '@nestjs/common';
import {
  APPLICANT_ACTIONS,
  type ApplicantAction,
  type StepReviewInput,
  VERIFICATION_EVENTS,
} from '@tessera/contracts';
import { appendToOutbox } from '@tessera/platform';
import { DataSource, type EntityManager } from 'typeorm';
import { toStepResults } from '../applicants/step-results';
import type { LevelEntity } from '../levels/entities/level.entity';
import {
  type ChildOutcome,
  isRequiredStep,
  type ReviewVerdict,
  type StepOutcome,
  verdictOf,
  withChildren,
} from './review-rules';
import { HAS_OPEN_CHILD } from '../ubos/open-children';

/** An applicant as the operator addresses it (product + externalUserId), with its review columns. */
export interface ReviewTarget {
  id: string;
  productId: string;
  externalUserId: string;
  levelId: string | null;
  levelName: string | null;
  status: string;
  riskLevel: string;
  attempt: number;
  reviewAnswer: string | null;
  reviewRejectType: string | null;
  rejectLabels: string[];
  moderationComment: string | null;
  reviewedAt: Date | null;
  createdAt: Date;
  /** Created through a sandbox credential: only such applicants take a sandbox review (decision 0434). */
  sandbox: boolean;
}

/** The applicant row as a review transaction holds it (locked FOR UPDATE). */
export interface LockedApplicant {
  id: string;
  productId: string;
  externalUserId: string;
  type: 'individual' | 'company';
  levelId: string | null;
  status: string;
  parentApplicantId: string | null;
  sandbox: boolean;
  blocklisted: boolean;
  createdAt: Date;
}

/**
 * Why the applicant takes no verdict now: deactivated (until activated) or blocklisted (its verdict is the
 * blocklist's RED FINAL until unblocked and reset); null when it does. A check that finishes meanwhile still
 * records its step, but completes no review (decision 0435).
 */
export function frozenBy(
  applicant: Pick<LockedApplicant, 'status' | 'blocklisted'>,
): 'deactivated' | 'blocklisted' | null {
  if (applicant.status === 'deactivated') return 'deactivated';
  return applicant.blocklisted ? 'blocklisted' : null;
}

export type StepDecisionResult =
  | { outcome: 'decided'; step: StepOutcome; reviewCompleted: boolean }
  /** The step is in a state that takes no decision (no row = pending). */
  | { outcome: 'not_decidable'; reviewStatus: string }
  /** The applicant moved to another level between the lookup and the transaction. */
  | { outcome: 'level_changed' }
  /** The applicant takes no verdict now (frozenBy). */
  | { outcome: 'frozen'; by: 'deactivated' | 'blocklisted' };

const TERMINAL_STATUSES = ['approved', 'rejected'];

/** A child spawned from one of a company's UBO rows; `removed` when its row is (it left the roll-up). */
interface SpawnedChild extends ChildOutcome {
  removed: boolean;
}

/** Open: not `approved` or `rejected` yet (a deactivated or expired child is open). */
const isOpenChild = (child: ChildOutcome) => !TERMINAL_STATUSES.includes(child.status);

/** How a review that may end ends: completed, held for the company's open children, or still open. */
export type ReviewConclusion = 'completed' | 'held' | 'open';

const RISK_ORDER = ['unknown', 'low', 'medium', 'high'];

export { APPLICANT_ACTIONS, type ApplicantAction };

/** The partner-visible review event of each operator action. */
const ACTION_HISTORY_EVENTS: Record<ApplicantAction, string> = {
  reset: 'applicant.reset',
  deactivate: 'applicant.deactivated',
  activate: 'applicant.activated',
  blocklist: 'applicant.blocklisted',
  unblock: 'applicant.blocklist_removed',
};

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

/** Rows of an UPDATE … RETURNING (TypeORM answers `[rows, rowCount]` for UPDATE statements). */
async function updateReturning<T>(manager: EntityManager, sql: string, params: unknown[]): Promise<T[]> {
  const [rows] = await manager.query<[T[], number]>(sql, params);
  return rows;
}

const STEP_COLUMNS = `kind, review_status AS "reviewStatus", review_answer AS "reviewAnswer",
  review_reject_type AS "reviewRejectType", reject_labels AS "rejectLabels",
  moderation_comment AS "moderationComment", client_comment AS "clientComment", updated_at AS "updatedAt"`;

@Injectable()
export class ReviewsRepository {
  constructor(private readonly dataSource: DataSource) {}

  async findApplicant(productId: string, externalUserId: string): Promise<ReviewTarget | undefined> {
    const [row] = await this.dataSource.query<ReviewTarget[]>(
      `SELECT a.id, a.product_id AS "productId", a.external_user_id AS "externalUserId", a.level_id AS "levelId",
              l.name AS "levelName", a.status, a.risk_level AS "riskLevel", a.attempt,
              a.review_answer AS "reviewAnswer", a.review_reject_type AS "reviewRejectType",
              a.reject_labels AS "rejectLabels", a.moderation_comment AS "moderationComment",
              a.reviewed_at AS "reviewedAt", a.created_at AS "createdAt", a.sandbox
         FROM applicants a LEFT JOIN levels l ON l.id = a.level_id
        WHERE a.external_user_id = $1 AND a.product_id = $2`,
      [externalUserId, productId],
    );
    return row;
  }

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
    actorType: string;
  }): Promise<StepDecisionResult> {
    const { level, kind, decision } = input;
    return this.dataSource.transaction(async (manager) => {
      const applicant = await this.lockApplicant(manager, input.applicantId);
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
      await this.recordEvent(manager, applicant, 'step.reviewed', input.actorType, {
        kind,
        enrollmentId: current.enrollmentId,
        previousStatus: current.reviewStatus,
        ...result,
      });
      const reviewCompleted =
        isRequiredStep(level, kind) &&
        (await this.concludeReview(manager, applicant, level, input.actorType)) === 'completed';
      return { outcome: 'decided', step, reviewCompleted };
    });
  }

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
    actorType: string,
  ): Promise<ReviewConclusion> {
    const own = verdictOf(level, await this.steps(manager, applicant.id));
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
      await this.recordEvent(manager, applicant, 'review.held', actorType, { openChildren: open });
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
    actorType: string,
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
      await this.recordEvent(manager, applicant, 'enrollment.completed', actorType, {
        enrollmentId: enrollment.id,
        reviewAnswer: verdict.reviewAnswer,
      });
    }
    await this.recordEvent(
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
    const steps = await this.steps(manager, applicant.id);
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
    if (applicant.parentApplicantId && !TERMINAL_STATUSES.includes(applicant.status)) {
      await this.rollUpCompany(manager, applicant.parentApplicantId);
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
    const parent = await this.lockApplicant(manager, parentId);
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
    const steps = await this.steps(manager, parent.id);
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
      const applicant = await this.lockApplicant(manager, input.applicantId);
      if (!applicant) return 'conflict';
      const [flags] = await manager.query<{ blocklisted: boolean }[]>(
        'SELECT blocklisted FROM applicants WHERE id = $1',
        [applicant.id],
      );
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
          if (flags.blocklisted) return 'conflict';
          await manager.query('UPDATE applicants SET blocklisted = true, updated_at = now() WHERE id = $1', [
            applicant.id,
          ]);
          await failOpenEnrollments();
          break;
        case 'unblock':
          if (!flags.blocklisted) return 'conflict';
          await manager.query('UPDATE applicants SET blocklisted = false, updated_at = now() WHERE id = $1', [
            applicant.id,
          ]);
          break;
      }
      await this.recordEvent(manager, applicant, ACTION_HISTORY_EVENTS[action], 'operator', { reason });
      // Deactivated or not: a blocklisted applicant holds the blocklist's verdict, so activate cannot bring back
      // an earlier approval.
      if (action === 'blocklist' && input.level) {
        await this.completeReview(
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
    const applicant = await this.lockApplicant(manager, applicantId);
    if (!applicant || frozenBy(applicant)) return;
    if (TERMINAL_STATUSES.includes(applicant.status)) {
      // A UBO child back to its verdict: while deactivated it held its parent's round open.
      if (applicant.parentApplicantId) await this.rollUpCompany(manager, applicant.parentApplicantId);
      return;
    }
    if (level && applicant.levelId === level.id) {
      await this.concludeReview(manager, applicant, level, 'operator');
    }
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
      const applicant = await this.lockApplicant(manager, input.applicantId);
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
        await this.recordEvent(manager, applicant, 'step.reviewed', 'partner', {
          kind,
          sandbox: true,
          ...result,
        });
      }
      const conclusion = await this.concludeReview(manager, applicant, level, 'partner');
      if (conclusion === 'open') return 'incomplete';
      return conclusion === 'held' ? 'held' : 'reviewed';
    });
  }

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
      const applicant = await this.lockApplicant(manager, input.applicantId);
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
      await this.recordEvent(manager, applicant, result.historyEvent, 'system', {
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
        await this.holdForOperator(manager, applicant, level, step.kind);
      } else if (isRequiredStep(level, step.kind) && !frozenBy(applicant)) {
        await this.concludeReview(manager, applicant, level, 'system');
      }
      return 'recorded';
    });
  }

  /**
   * A step waits for an operator: the applicant goes `in_review` and the partner hears `applicantOnHold` once.
   * A company with open UBO children stays `awaiting_user` (decision 0443); the roll-up puts it on hold when
   * the round closes (closeRound).
   */
  private async holdForOperator(
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
    await this.recordEvent(manager, applicant, 'applicant.sent_to_review', 'system', { kind });
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

  /** Locks the applicant row for the rest of the transaction. */
  async lockApplicant(manager: EntityManager, applicantId: string): Promise<LockedApplicant | undefined> {
    const [row] = await manager.query<LockedApplicant[]>(
      `SELECT id, product_id AS "productId", external_user_id AS "externalUserId", type, level_id AS "levelId",
              status, parent_applicant_id AS "parentApplicantId", sandbox, blocklisted, created_at AS "createdAt"
         FROM applicants WHERE id = $1 FOR UPDATE`,
      [applicantId],
    );
    return row;
  }

  /** Every stored step of the applicant with what decided it, for the operator (check results included). */
  operatorSteps(
    applicantId: string,
  ): Promise<(StepOutcome & { checkResult: Record<string, unknown> | null })[]> {
    return this.dataSource.query(
      `SELECT ${STEP_COLUMNS}, check_result AS "checkResult" FROM applicant_steps WHERE applicant_id = $1`,
      [applicantId],
    );
  }

  /** The applicant's stored step progress. */
  stepProgress(applicantId: string): Promise<StepOutcome[]> {
    return this.steps(this.dataSource.manager, applicantId);
  }

  private steps(manager: EntityManager, applicantId: string): Promise<StepOutcome[]> {
    return manager.query<StepOutcome[]>(
      `SELECT ${STEP_COLUMNS} FROM applicant_steps WHERE applicant_id = $1`,
      [applicantId],
    );
  }

  private async recordEvent(
    manager: EntityManager,
    applicant: Pick<LockedApplicant, 'id' | 'productId'>,
    eventType: string,
    actorType: string,
    data: Record<string, unknown>,
  ): Promise<void> {
    await manager.query(
      `INSERT INTO review_events (applicant_id, product_id, event_type, actor_type, data)
       VALUES ($1, $2, $3, $4, $5::jsonb)`,
      [applicant.id, applicant.productId, eventType, actorType, JSON.stringify(data)],
    );
  }
}
