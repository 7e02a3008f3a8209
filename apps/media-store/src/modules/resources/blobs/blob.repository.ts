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
}

export class BlobNotFoundError extends Error {
  constructor(key: string) {
    super(`No blob under ${key}`);
  }
}
