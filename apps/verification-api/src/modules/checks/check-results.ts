import type { CheckResult } from '../reviews/check-results.repository';

/** One thing a check found wrong: the reject label it carries and what the operator reads. */
export interface CheckProblem {
  label: string;
  comment: string;
}

const base = { risk: 'low', historyEvent: 'step.checked' } as const;

/** Every requirement met. */
export const passed = (details: Record<string, unknown>): CheckResult => ({
  ...base,
  decision: 'GREEN',
  rejectLabels: [],
  moderationComment: null,
  details,
});

/** Something the user can fix on the next session: RED RETRY with one label per kind of problem. */
export const retry = (details: Record<string, unknown>, problems: CheckProblem[]): CheckResult => ({
  ...base,
  decision: 'RED',
  reviewRejectType: 'RETRY',
  rejectLabels: [...new Set(problems.map((p) => p.label))],
  moderationComment: problems.map((p) => p.comment).join('; '),
  details,
});

/** The check cannot decide: the step waits for an operator, with the reason kept. */
export const forOperator = (
  details: Record<string, unknown>,
  reason: string,
  historyEvent = 'step.checked',
): CheckResult => ({
  ...base,
  historyEvent,
  decision: 'REVIEW',
  rejectLabels: [],
  moderationComment: null,
  details: { ...details, reason },
});

/** GREEN without problems, else RED RETRY. */
export const verdict = (details: Record<string, unknown>, problems: CheckProblem[]): CheckResult =>
  problems.length === 0 ? passed(details) : retry(details, problems);
