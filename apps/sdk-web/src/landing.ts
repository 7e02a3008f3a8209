import type { Session } from './api';

/**
 * Where a loaded session lands (docs/hosted-sdk.md "The end"):
 * - `flow`: the enrollment is open, the user works through the steps;
 * - `success`: submitted, under review or approved, the terminal success (successUrl, else returnUrl);
 * - `rejected`: a final reject (RED FINAL), the terminal error (errorUrl, else returnUrl);
 * - `retry`: rejected for another try (RED RETRY): this link is done, the partner sends a new one; no redirect,
 *   since the contract redirects on terminal success or on a final reject only;
 * - `expired`: the link can no longer be used (expired, replaced, failed, or a state the page does not know).
 */
export type Landing = 'flow' | 'success' | 'rejected' | 'retry' | 'expired';

const SUCCESS_STATES = new Set(['submitted', 'in_review', 'completed']);

export function landingFor(session: Pick<Session, 'enrollmentStatus' | 'review'>): Landing {
  const { reviewAnswer, reviewRejectType } = session.review;
  if (reviewAnswer === 'RED' && reviewRejectType === 'FINAL') return 'rejected';
  if (session.enrollmentStatus === 'open') return 'flow';
  if (SUCCESS_STATES.has(session.enrollmentStatus)) return 'success';
  if (session.enrollmentStatus === 'rejected') return reviewRejectType === 'EXPIRED' ? 'expired' : 'retry';
  return 'expired';
}
