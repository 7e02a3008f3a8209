import type { NameMatch } from './sanctions-index';

/** Thresholds of the screening (docs/decisions/0130), tuned on the quality set of docs/aml-screening.md. */
export const SCREENING_THRESHOLDS = {
  /** A whole-name match at or above this, not contradicted by the date of birth: a hit (RED). */
  hit: 90,
  /** At or above this (and below a hit): a possible match an operator decides. */
  review: 82,
  /** Score added when a listed date of birth agrees with the applicant's. */
  dobAgrees: 5,
  /** Score removed when the list has dates of birth and none agrees. */
  dobDisagrees: 12,
} as const;

export type DobAgreement = 'agrees' | 'disagrees' | 'unknown';

/** Whether a listed date of birth (`YYYY-MM-DD`, `YYYY-MM`, `YYYY`, `YYYY..YYYY`) fits `dob` (`YYYY-MM-DD`). */
export function dobAgreement(listed: readonly string[], dob: string | undefined): DobAgreement {
  if (!dob || listed.length === 0 || !/^\d{4}-\d{2}-\d{2}$/.test(dob)) return 'unknown';
  const year = Number(dob.slice(0, 4));
  for (const value of listed) {
    const range = /^(\d{4})\.\.(\d{4})$/.exec(value);
    if (range) {
      if (year >= Number(range[1]) && year <= Number(range[2])) return 'agrees';
    } else if (dob.startsWith(value)) return 'agrees';
  }
  return 'disagrees';
}

export interface ScoredMatch extends NameMatch {
  score: number;
  dob: DobAgreement;
}

/** The screening score of a name match: the name similarity moved by the date-of-birth evidence. */
export function scoreMatch(match: NameMatch, dob: string | undefined): ScoredMatch {
  const agreement = dobAgreement(match.entry.dobs, dob);
  let score = match.nameScore;
  // A name that only holds the listed words (or is held by them) is never a hit on the name alone: at
  // best a possible match, which a matching date of birth confirms and a contradicting one clears.
  if (match.basis === 'partial_name') score = Math.min(score, SCREENING_THRESHOLDS.hit - 1);
  if (agreement === 'agrees') score = Math.min(100, score + SCREENING_THRESHOLDS.dobAgrees);
  if (agreement === 'disagrees') score -= SCREENING_THRESHOLDS.dobDisagrees;
  return { ...match, score, dob: agreement };
}

export type ScreeningOutcome = 'hit' | 'possible_match' | 'clear';

export const outcomeOf = (score: number): ScreeningOutcome =>
  score >= SCREENING_THRESHOLDS.hit
    ? 'hit'
    : score >= SCREENING_THRESHOLDS.review
      ? 'possible_match'
      : 'clear';
