import { z } from 'zod';
import { isUuid } from './validation';

/**
 * Page cursors of the custody lists (vaults, transactions), newest first: base64url of `createdAt|id` of the
 * page's last row. The cursor is opaque to partners; only its id is what the next page starts after.
 */
export interface PageCursor {
  createdAt: string;
  id: string;
}

export function encodeCursor(createdAt: Date | string, id: string): string {
  return Buffer.from(`${new Date(createdAt).toISOString()}|${id}`).toString('base64url');
}

export function decodeCursor(cursor: string): PageCursor {
  const [createdAt, id] = Buffer.from(cursor, 'base64url').toString('utf8').split('|');
  if (!createdAt || !id || Number.isNaN(Date.parse(createdAt)) || !isUuid(id)) {
    throw new z.ZodError([{ code: 'custom', path: ['cursor'], message: 'Invalid cursor', input: cursor }]);
  }
  return { createdAt, id };
}

/**
 * The condition "after the cursor" in `ORDER BY created_at DESC, id DESC`, for `alias` of `table`, with the
 * cursor's createdAt and id at the `$createdAtParam` and `$idParam` placeholders. The position is the cursor
 * row's own `created_at`, read from the table: Postgres keeps microseconds and the cursor's timestamp only
 * milliseconds, so comparing with the cursor's would skip the rows of the same millisecond that sort after it.
 * The cursor's timestamp is the fallback for a row that no longer exists.
 */
export function afterCursor(alias: string, table: string, createdAtParam: number, idParam: number): string {
  return `(${alias}."created_at", ${alias}."id") < (
    COALESCE((SELECT c."created_at" FROM "${table}" c WHERE c."id" = $${idParam}::uuid), $${createdAtParam}::timestamptz),
    $${idParam}::uuid)`;
}
