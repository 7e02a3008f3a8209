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

/** SQL condition: the company status in `column` is one a new round takes back to `awaiting_user`. */
const reopens = (column: string) =>
  `(${column} IN ('init', 'pending', 'in_review', 'approved')
    OR (${column} = 'rejected' AND review_reject_type IS DISTINCT FROM 'FINAL'))`;

/**
 * Opens the round of UBO children of the company `target` (an SQL expression) again: the company waits for them
 * in `awaiting_user` (the status a deactivated company gets back moves the same way), and `children_completed_at`
 * is cleared so that `companyChildrenCompleted` fires once more when the round closes (decision 0140); its verdict
 * is computed again then (decision 0443). A company rejected FINAL stays as it is.
 */
const reopenRound = (target: string) => `
  UPDATE applicants
     SET status = CASE WHEN ${reopens('status')} THEN 'awaiting_user' ELSE status END,
         status_before_deactivation = CASE WHEN ${reopens('status_before_deactivation')} THEN 'awaiting_user'
                                           ELSE status_before_deactivation END,
         children_completed_at = NULL, updated_at = now()
   WHERE id = ${target}`;

/** The round of the company `$1`: a new child was spawned into it. */
export const REOPEN_ROUND = reopenRound('$1');

/**
 * The round of the company whose live UBO row links the child `$1`: the child was taken back out of its verdict
 * (a new link reopened its RETRY rejection), whichever call minted that link (decision 0443). Nothing for an
 * applicant that is no live row's child.
 */
export const REOPEN_ROUND_OF_CHILD = reopenRound(
  '(SELECT u.parent_applicant_id FROM ubos u WHERE u.linked_applicant_id = $1 AND NOT u.removed)',
);
