import { AppException } from '@tessera/platform';
import type { Readable } from 'node:stream';

/** An inclusive byte range, as HTTP `Range: bytes=start-end` names it. */
export interface ByteRange {
  start: number;
  end: number;
}

/**
 * Where the bytes of uploads live (MEDIA_STORAGE): local disk or S3. The only code that touches them.
 * `put` consumes `body` to the end; when `body` fails (refused type, too large, client gone) nothing is left
 * under `key` and no temporary object or file remains.
 */
export abstract class BlobRepository {
  abstract put(key: string, body: Readable, contentType: string): Promise<void>;
  /** The bytes of `key` (or of one range of it); rejects with BlobNotFoundError when absent. */
  abstract read(key: string, range?: ByteRange): Promise<Readable>;
  abstract exists(key: string): Promise<boolean>;
  abstract remove(key: string): Promise<void>;

  /**
   * Removes what uploads cut short by a dead process left behind (decision 0498): a `kill -9` or a crash mid-upload
   * runs no clean-up. Only what was last written before `before` goes, so an upload still streaming in on any
   * replica keeps its bytes. Answers how many it removed. S3 keeps such bytes as incomplete multipart uploads,
   * which the bucket's `AbortIncompleteMultipartUpload` lifecycle rule removes (docs/deploy.md): none here.
   */
  async sweepLeftovers(_before: Date): Promise<number> {
    return 0;
  }
}

export class BlobNotFoundError extends Error {
  constructor(key: string) {
    super(`No blob under ${key}`);
  }
}

/**
 * The storage did not answer, or refused for a reason of its own (connection refused or reset, a connect or idle
 * timeout, an S3 5xx, a disk that refuses): the caller gets 503 `Retry-After: 1` in the error shape (decisions 0493, 0494), never a 500
 * or a hang. The cause is logged, never sent.
 */
export class StorageUnavailableError extends AppException {
  constructor(readonly storageError: unknown) {
    super(503, 'Media storage temporarily unavailable; retry with back-off', undefined, undefined, 1);
  }
}

/**
 * Error codes of a storage that cannot take or give bytes now: the socket errors of an S3 that is away or cut the
 * connection, and the refusals of the `fs` driver's disk (full, over a quota or a file-size limit, read-only, an
 * I/O error, out of file descriptors; decision 0494). A wrong request or a bug keeps its own error (a 500).
 */
const STORAGE_AWAY = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ENOSPC',
  'EDQUOT',
  'EFBIG',
  'EROFS',
  'EIO',
  'EMFILE',
  'ENFILE',
]);

/** Whether `err` says the storage is unavailable rather than that the request was wrong (decision 0493). */
export function storageUnavailable(err: unknown): boolean {
  const e = err as { name?: string; code?: string; $metadata?: { httpStatusCode?: number } } | undefined;
  if (!e) return false;
  if (err instanceof StorageUnavailableError) return true;
  if (e.name === 'TimeoutError' || (e.code !== undefined && STORAGE_AWAY.has(e.code))) return true;
  return (e.$metadata?.httpStatusCode ?? 0) >= 500;
}

/** `err` as a StorageUnavailableError when the storage is unavailable (an existing one unchanged); else `err`. */
export const asStorageError = (err: unknown): unknown =>
  err instanceof StorageUnavailableError || !storageUnavailable(err) ? err : new StorageUnavailableError(err);
