import type { LevelEntity } from '../levels/entities/level.entity';
import { requiredSteps, type StepProgress } from '../applicants/step-results';

/** A stored step with everything a decision wrote on it. */
export interface StepOutcome extends StepProgress {
  rejectLabels: string[];
  moderationComment: string | null;
  clientComment: string | null;
}

/** What completes an applicant's review: the applicant's reviewResult. */
export interface ReviewVerdict {
  reviewAnswer: 'GREEN' | 'RED';
  reviewRejectType: 'FINAL' | 'RETRY' | 'EXPIRED' | null;
  rejectLabels: string[];
  moderationComment: string | null;
}

export const isRequiredStep = (level: Pick<LevelEntity, 'steps'>, kind: string): boolean =>
  requiredSteps(level).some((step) => step.kind === kind);

const REJECT_TYPE_PRECEDENCE = ['FINAL', 'RETRY', 'EXPIRED'] as const;

/**
 * The applicant's verdict once every required step of the level is completed with an answer, else
 * undefined. Optional steps never count.
 * - RED when any required step is RED, else GREEN;
 * - reviewRejectType: the strongest type among the RED steps (FINAL over RETRY over EXPIRED);
 * - rejectLabels: the labels of the RED steps, in level order, without repeats;
 * - moderationComment: the comments of the steps whose answer is the verdict, in level order, one per line.
 */
export function verdictOf(
  level: Pick<LevelEntity, 'steps'>,
  steps: StepOutcome[],
): ReviewVerdict | undefined {
  const byKind = new Map(steps.map((step) => [step.kind, step]));
  const required = requiredSteps(level).map((step) => byKind.get(step.kind));
  if (required.length === 0) return undefined;
  const decided: StepOutcome[] = [];
  for (const step of required) {
    if (!step || step.reviewStatus !== 'completed' || !step.reviewAnswer) return undefined;
    decided.push(step);
  }
  const red = decided.filter((step) => step.reviewAnswer === 'RED');
  const reviewAnswer = red.length > 0 ? 'RED' : 'GREEN';
  const reviewRejectType =
    reviewAnswer === 'GREEN'
      ? null
      : (REJECT_TYPE_PRECEDENCE.find((type) => red.some((step) => step.reviewRejectType === type)) ??
        'RETRY');
  const comments = decided
    .filter((step) => step.reviewAnswer === reviewAnswer && step.moderationComment)
    .map((step) => step.moderationComment as string);
  return {
    reviewAnswer,
    reviewRejectType,
    rejectLabels: [...new Set(red.flatMap((step) => step.rejectLabels))],
    moderationComment: comments.length > 0 ? comments.join('\n') : null,
  };
}

/** A UBO child spawned from a company's row, as its parent's verdict reads it. */
export interface ChildOutcome {
  status: string;
  reviewRejectType: string | null;
}

/** The label a company's verdict carries when one of its UBO children was rejected (decision 0443). */
export const UBO_REJECTED_LABEL = 'UBO_REJECTED';

/**
 * A company's verdict once its live UBO children are all `approved` or `rejected` (decision 0443): its own
 * steps' verdict (verdictOf) when no child was rejected, else RED:
 * - reviewRejectType: the strongest among its own RED steps' type and the rejected children's types (FINAL
 *   over RETRY over EXPIRED; a child with none counts as RETRY), so a child rejected FINAL makes it FINAL;
 * - rejectLabels: its own RED steps' labels, then `UBO_REJECTED` (a child's labels describe that person, not
 *   the company; the partner reads them on the child);
 * - moderationComment: its own RED steps' comments, as verdictOf gives them (none when only children are RED).
 */
export function withChildren(own: ReviewVerdict, children: ChildOutcome[]): ReviewVerdict {
  const rejected = children.filter((child) => child.status === 'rejected');
  if (rejected.length === 0) return own;
  const ownRed = own.reviewAnswer === 'RED';
  const types = [
    ...(ownRed ? [own.reviewRejectType ?? 'RETRY'] : []),
    ...rejected.map((child) => child.reviewRejectType ?? 'RETRY'),
  ];
  return {
    reviewAnswer: 'RED',
    reviewRejectType: REJECT_TYPE_PRECEDENCE.find((type) => types.includes(type)) ?? 'RETRY',
    rejectLabels: [...new Set([...(ownRed ? own.rejectLabels : []), UBO_REJECTED_LABEL])],
    moderationComment: ownRed ? own.moderationComment : null,
  };
}
