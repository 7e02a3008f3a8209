import type { EntityManager } from 'typeorm';

/** The identity fields (level keys) that the aml and adverse_media steps screen (screeningSubject). */
export const SCREENED_FIELDS = ['firstName', 'middleName', 'lastName', 'dateOfBirth', 'companyName'];

/**
 * When a change touches a screened field, the screening steps that hold a result for the old identity open
 * again (`pending`): the next submission screens the new one (decision 0441). A RED `FINAL` result stays (the
 * applicant is finally rejected), as do screenings still running. Runs in the caller's transaction, which holds
 * the applicant's row lock. Answers the steps reopened.
 */
export async function reopenScreening(
  manager: EntityManager,
  applicantId: string,
  changedFields: string[],
): Promise<string[]> {
  if (!changedFields.some((field) => SCREENED_FIELDS.includes(field))) return [];
  const [rows] = await manager.query<[{ kind: string }[], number]>(
    `UPDATE applicant_steps
        SET review_status = 'pending', review_answer = NULL, review_reject_type = NULL, reject_labels = '[]',
            moderation_comment = NULL, client_comment = NULL, check_result = NULL, enrollment_id = NULL,
            updated_at = now()
      WHERE applicant_id = $1 AND kind IN ('aml', 'adverse_media')
        AND review_status IN ('completed', 'awaitingOperatorReview')
        AND NOT (review_answer IS NOT DISTINCT FROM 'RED' AND review_reject_type IS NOT DISTINCT FROM 'FINAL')
      RETURNING kind`,
    [applicantId],
  );
  return rows.map((row) => row.kind).sort();
}
