import type { CheckResult } from '../reviews/check-results.repository';
import type { ScreeningResult, ScreeningSubject } from '../screening/screening.service';

/** What the aml and adverse_media steps screen: the person's full name and birth date, or the company name. */
export function screeningSubject(
  type: 'individual' | 'company',
  info: Record<string, unknown>,
): ScreeningSubject | undefined {
  const text = (key: string) => (typeof info[key] === 'string' ? (info[key] as string).trim() : '');
  if (type === 'company') {
    const name = text('companyName');
    return name ? { kind: 'organisation', names: [name] } : undefined;
  }
  const full = [text('firstName'), text('middleName'), text('lastName')].filter(Boolean).join(' ');
  if (!text('firstName') && !text('lastName')) return undefined;
  const names = [full];
  // Without the middle name too: lists often omit it.
  if (text('middleName')) names.push([text('firstName'), text('lastName')].filter(Boolean).join(' '));
  const dob = text('dateOfBirth');
  return { kind: 'individual', names, ...(/^\d{4}-\d{2}-\d{2}$/.test(dob) ? { dateOfBirth: dob } : {}) };
}

const LABELS: Record<string, string> = { aml: 'SANCTIONS', adverse_media: 'ADVERSE_MEDIA' };

/**
 * The step result of a screening (docs/aml-screening.md): a hit is RED FINAL with the step's label
 * (SANCTIONS or ADVERSE_MEDIA); a possible match waits for an operator with the matches kept on the step;
 * no match is GREEN.
 */
export function screeningCheckResult(kind: 'aml' | 'adverse_media', screening: ScreeningResult): CheckResult {
  const details = {
    check: 'sanctions_screening',
    outcome: screening.outcome,
    list: screening.list,
    matches: screening.matches,
  };
  const historyEvent = `${kind}.run`;
  if (screening.outcome === 'hit') {
    const top = screening.matches[0];
    return {
      decision: 'RED',
      reviewRejectType: 'FINAL',
      rejectLabels: [LABELS[kind]],
      moderationComment: `Sanctions list match: ${top.listName} (${top.programs.join(', ')})`,
      details,
      risk: 'high',
      historyEvent,
    };
  }
  if (screening.outcome === 'possible_match') {
    return {
      decision: 'REVIEW',
      rejectLabels: [],
      moderationComment: null,
      details,
      risk: 'medium',
      historyEvent,
    };
  }
  return { decision: 'GREEN', rejectLabels: [], moderationComment: null, details, risk: 'low', historyEvent };
}
