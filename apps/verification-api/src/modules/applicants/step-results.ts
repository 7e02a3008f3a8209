import type { LevelEntity, LevelStepConfig } from '../levels/entities/level.entity';

/** Stored progress of one step kind (a kind without a row is `pending`). */
export interface StepProgress {
  kind: string;
  reviewStatus: string;
  reviewAnswer: string | null;
  reviewRejectType: string | null;
  updatedAt: Date;
}

/** The contract's Step result (item of GET .../steps and of the applicantReviewed `steps`). */
export interface StepResult {
  kind: string;
  optional: boolean;
  reviewAnswer: string | null;
  reviewStatus: string;
  reviewRejectType: string | null;
  lastUpdatedAtUtc: string;
}

/** The steps an applicant must complete: every step of the level that is not `optional`. */
export const requiredSteps = (level: Pick<LevelEntity, 'steps'> | null): LevelStepConfig[] =>
  (level?.steps ?? []).filter((step) => !step.optional);

/**
 * One Step result per required step of the level, in level order. A step without progress is `pending`
 * and dates from `since` (the applicant's creation).
 */
export function toStepResults(
  level: Pick<LevelEntity, 'steps'> | null,
  progress: StepProgress[],
  since: Date,
): StepResult[] {
  const byKind = new Map(progress.map((row) => [row.kind, row]));
  return requiredSteps(level).map((step) => {
    const row = byKind.get(step.kind);
    return {
      kind: step.kind,
      optional: step.optional,
      reviewAnswer: row?.reviewAnswer ?? null,
      reviewStatus: row?.reviewStatus ?? 'pending',
      reviewRejectType: row?.reviewRejectType ?? null,
      lastUpdatedAtUtc: new Date(row?.updatedAt ?? since).toISOString(),
    };
  });
}
