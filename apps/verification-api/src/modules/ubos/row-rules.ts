import { type AppException, conflict, unprocessable } from '@tessera/platform';
import type { EntityManager } from 'typeorm';

/** Live (not removed) rows a company may hold (decision 0445). */
export const MAX_LIVE_UBO_ROWS = 100;

/** Why a row may not be added or become what a PATCH makes it (decision 0445). */
export type RowRefusal =
  | { outcome: 'too_many_rows' }
  | { outcome: 'ownership_over_100'; total: string }
  | { outcome: 'duplicate'; uboIndex: number };

/**
 * Checks a row, new (`exceptId` null) or edited, against the company's other live rows, in the caller's
 * transaction, which holds the company's row lock (so concurrent appends and edits are checked one after
 * another): at most MAX_LIVE_UBO_ROWS live rows; their ownership shares add up to at most 100 %; one row per
 * person (the same name, compared without case or extra spaces, and the same date of birth). Numbers stay
 * numeric in SQL: no float ever adds the shares.
 */
export async function refuseRow(
  manager: EntityManager,
  parentId: string,
  row: { fullName: string; dateOfBirth: string | null; ownershipPercent: number | string | null },
  exceptId: string | null,
): Promise<RowRefusal | null> {
  const [others] = await manager.query<
    { live: number; total: string; over: boolean; duplicate: number | null }[]
  >(
    `SELECT count(*)::int AS live,
            (coalesce(sum(ownership_percent), 0) + coalesce($3::numeric, 0))::text AS total,
            coalesce(sum(ownership_percent), 0) + coalesce($3::numeric, 0) > 100 AS over,
            min(ubo_index) FILTER (
              WHERE lower(regexp_replace(btrim(full_name), '\\s+', ' ', 'g'))
                    = lower(regexp_replace(btrim($4), '\\s+', ' ', 'g'))
                AND date_of_birth IS NOT DISTINCT FROM $5) AS duplicate
       FROM ubos
      WHERE parent_applicant_id = $1 AND NOT removed AND id IS DISTINCT FROM $2`,
    [parentId, exceptId, row.ownershipPercent, row.fullName, row.dateOfBirth],
  );
  if (exceptId === null && others.live >= MAX_LIVE_UBO_ROWS) return { outcome: 'too_many_rows' };
  if (others.duplicate !== null) return { outcome: 'duplicate', uboIndex: others.duplicate };
  if (others.over) return { outcome: 'ownership_over_100', total: others.total };
  return null;
}

/** The error a refused row answers: 409 for a person already listed, 422 for the limits. */
export function refusedRow(refusal: RowRefusal): AppException {
  switch (refusal.outcome) {
    case 'duplicate':
      return conflict(`This person is already row ${refusal.uboIndex}: add the roles to that row`);
    case 'too_many_rows':
      return unprocessable(`A company holds at most ${MAX_LIVE_UBO_ROWS} rows; remove one first`);
    case 'ownership_over_100':
      return unprocessable(
        `ownershipPercent: the company's rows would add up to ${refusal.total} %, over 100 %`,
      );
  }
}
