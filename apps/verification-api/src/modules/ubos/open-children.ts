/** The statuses that end a verification: an applicant in one has its verdict (a UBO child is no longer open). */
export const TERMINAL_STATUSES = ['approved', 'rejected'];

/**
 * SQL condition: the company `$1` has a live (not removed) spawned UBO child that is open, not `approved` or
 * `rejected` yet (a deactivated or expired child is open). Such a company stays `awaiting_user` and holds its
 * verdict (decision 0443).
 */
export const HAS_OPEN_CHILD = `EXISTS (
  SELECT 1 FROM ubos u JOIN applicants c ON c.id = u.linked_applicant_id
   WHERE u.parent_applicant_id = $1 AND NOT u.removed AND c.status <> ALL('{${TERMINAL_STATUSES.join(',')}}'::text[]))`;
