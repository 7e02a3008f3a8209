import { SDK_ERROR_CODES } from '@tessera/contracts';
import { AppException } from '@tessera/platform';
import type { EntityManager } from 'typeorm';

/** Takes the applicant's row lock, the first lock of every write about an applicant (review writes too). */
export async function lockApplicantRow(manager: EntityManager, applicantId: string): Promise<void> {
  await manager.query('SELECT 1 FROM applicants WHERE id = $1 FOR UPDATE', [applicantId]);
}

/**
 * Whether the session's enrollment is still open, read after the caller took the applicant's lock, in a statement
 * of its own: one that joined the enrollment to the locked row would read it from the snapshot taken before the
 * lock wait, and miss a submit that committed meanwhile.
 */
export async function enrollmentOpen(
  manager: EntityManager,
  applicantId: string,
  enrollmentId: string,
): Promise<boolean> {
  const [row] = await manager.query<{ status: string }[]>(
    'SELECT status FROM enrollments WHERE id = $1 AND applicant_id = $2',
    [enrollmentId, applicantId],
  );
  return row?.status === 'open';
}

/**
 * Takes the applicant's row lock and answers whether the session's enrollment is still open under it. An SDK
 * write checks this in its own transaction: the session read at the start of the request may have been
 * submitted, replaced or closed since, and the enrollment's submit takes the same lock first, so a write either
 * lands before the submit or is refused (decision 0441).
 */
export async function lockOpenSession(
  manager: EntityManager,
  applicantId: string,
  enrollmentId: string,
): Promise<boolean> {
  await lockApplicantRow(manager, applicantId);
  return enrollmentOpen(manager, applicantId, enrollmentId);
}

/**
 * The 409 of an SDK write that found the session submitted or closed, with its reason in `X-Error-Code`
 * (decision 0458): the page explains it without reading the message.
 */
export const verificationSubmitted = (message = 'The verification was already submitted'): AppException =>
  new AppException(409, message, undefined, SDK_ERROR_CODES.verificationSubmitted);
