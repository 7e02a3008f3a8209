import { z } from 'zod';
import { isUuid } from './validation';

/**
 * Page cursors of the custody lists (vaults, transactions; the operator's reconciliation runs), newest first:
 * base64url of `createdAt|id` of the page's last row (a run's `startedAt`). Opaque to callers.
 */
export interface PageCursor {
  createdAt: string;
  id: string;
}

export function encodeCursor(createdAt: Date | string, id: string): string {
  return Buffer.from(`${new Date(createdAt).toISOString()}|${id}`).toString('base64url');
}

/**
 * The times encodeCursor writes (`toISOString` of a stored row's time): years 0001 to 9999. JavaScript also
 * parses year 0000 and six-digit years, which Postgres does not store, so such a cursor failed in the query
 * with the generic 400 instead of this one's (decision 0484).
 */
const ISSUED_TIME = /^(?!0000)\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/**
 * The position a cursor names. Any time the service could have issued is a position, even one before or after
 * every row (a normal page, possibly empty); anything else is 400 with `errors.cursor` (decision 0484).
 */
export function decodeCursor(cursor: string): PageCursor {
  const [createdAt, id] = Buffer.from(cursor, 'base64url').toString('utf8').split('|');
  if (
    !createdAt ||
    !id ||
    !ISSUED_TIME.test(createdAt) ||
    Number.isNaN(Date.parse(createdAt)) ||
    !isUuid(id)
  ) {
    throw new z.ZodError([{ code: 'custom', path: ['cursor'], message: 'Invalid cursor', input: cursor }]);
  }
  return { createdAt, id };
}

export interface CursorPlaceholders {
  /** The cursor's time and id (`$4`, or TypeORM's `:time`). */
  time: string;
  id: string;
  /** The tenant whose rows are listed: a cursor row of another tenant is not read. */
  tenant?: string;
}

/**
 * The condition "after the cursor" in `ORDER BY <column> DESC, id DESC`, for `alias` of `table`. The position
 * is the cursor row's own stored time, read from the table: Postgres keeps microseconds and the cursor only
 * milliseconds, so comparing with the cursor's would skip the rows of the same millisecond that sort after it.
 * The cursor's time is the fallback for a row that no longer exists (or is not the tenant's).
 */
export function afterCursor(
  alias: string,
  table: string,
  placeholders: CursorPlaceholders,
  column = 'created_at',
): string {
  const { time, id, tenant } = placeholders;
  const own = tenant ? ` AND c."tenant_id" = ${tenant}` : '';
  return `(${alias}."${column}", ${alias}."id") < (
    COALESCE((SELECT c."${column}" FROM "${table}" c WHERE c."id" = ${id}::uuid${own}), ${time}::timestamptz),
    ${id}::uuid)`;
}
