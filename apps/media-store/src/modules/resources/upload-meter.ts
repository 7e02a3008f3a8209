import { type FileTypeResult, fromBuffer } from 'file-type';
import { createHash } from 'node:crypto';
import { Transform, type TransformCallback } from 'node:stream';

/** How many leading bytes are held back to sniff the type (file-type's own minimum sample). */
export const SNIFF_BYTES = 4100;

export class UnsupportedTypeError extends Error {
  constructor(readonly mime: string | undefined) {
    super(mime ? `A file of type ${mime} is not accepted here` : 'The file type is not recognised');
  }
}

/** An upload of zero bytes: there is nothing to classify or keep (decision 0487). */
export class EmptyFileError extends Error {
  constructor() {
    super('The file is empty');
  }
}

export class TooLargeError extends Error {
  constructor(readonly limitBytes: number) {
    super(`The file exceeds the limit of ${limitBytes} bytes`);
  }
}

/**
 * Passes an upload through while computing its sha256 and size. The first SNIFF_BYTES are held back until the
 * real type is known from the magic bytes: a type outside `allowed` fails the stream with UnsupportedTypeError
 * before a single byte goes downstream; more than `limitFor(mime)` bytes fail it with TooLargeError.
 */
export class UploadMeter extends Transform {
  private readonly hash = createHash('sha256');
  private head: Buffer[] = [];
  private headBytes = 0;
  private limit = Number.POSITIVE_INFINITY;
  size = 0;
  mime?: string;

  constructor(
    private readonly allowed: readonly string[],
    private readonly limitFor: (mime: string) => number,
  ) {
    super();
  }

  get sha256(): string {
    return this.hash.copy().digest('hex');
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.size += chunk.length;
    this.hash.update(chunk);
    if (this.mime === undefined) {
      this.head.push(chunk);
      this.headBytes += chunk.length;
      if (this.headBytes < SNIFF_BYTES) return callback();
      this.decide().then(() => callback(), callback);
      return;
    }
    if (this.size > this.limit) return callback(new TooLargeError(this.limit));
    callback(null, chunk);
  }

  override _flush(callback: TransformCallback): void {
    if (this.mime !== undefined) return callback();
    if (this.size === 0) return callback(new EmptyFileError());
    this.decide().then(() => callback(), callback);
  }

  private async decide(): Promise<void> {
    const head = Buffer.concat(this.head);
    this.head = [];
    const type = await sniff(head);
    if (!type || !this.allowed.includes(type.mime)) throw new UnsupportedTypeError(type?.mime);
    this.mime = type.mime;
    this.limit = this.limitFor(type.mime);
    if (this.size > this.limit) throw new TooLargeError(this.limit);
    this.push(head);
  }
}

/**
 * The type file-type reads from the magic bytes. It throws (EndOfStreamError, RangeError) on some headers cut
 * short, such as a bare PNG signature or an EBML header with a bad length: a file it cannot read is of no
 * known type, so the upload is refused as one (415), never failed as a server error.
 */
async function sniff(head: Buffer): Promise<FileTypeResult | undefined> {
  try {
    return await fromBuffer(head);
  } catch {
    return undefined;
  }
}

/**
 * Whether a request's `If-Range` lets its Range be served (RFC 9110 §13.1.5): absent, or naming the
 * representation exactly, by its strong ETag or by its Last-Modified date. Otherwise the Range is ignored and
 * the whole file goes out (200), so a client resuming with a validator of other bytes never splices a range
 * onto them. An upload's bytes never change, so a match is the ordinary case.
 */
export function ifRangeHolds(
  ifRange: string | undefined,
  validators: { etag: string; lastModified: string },
): boolean {
  if (ifRange === undefined) return true;
  const value = ifRange.trim();
  return value.startsWith('"') ? value === validators.etag : value === validators.lastModified;
}

/**
 * Whether a request's `If-None-Match` names the representation (RFC 9110 §13.1.2), so a GET or HEAD answers
 * 304: `*`, or a comma-separated list holding its ETag, compared weakly (`W/"x"` matches `"x"`).
 */
export function ifNoneMatchHolds(ifNoneMatch: string | undefined, etag: string): boolean {
  if (ifNoneMatch === undefined) return false;
  const value = ifNoneMatch.trim();
  if (value === '*') return true;
  const opaque = (tag: string) => tag.trim().replace(/^W\//, '');
  return value.split(',').some((tag) => opaque(tag) === opaque(etag));
}

/** One `Range: bytes=…` against a blob of `size` bytes (RFC 9110): absent or not a single byte range → full. */
export function parseRange(
  header: string | undefined,
  size: number,
): { start: number; end: number } | 'unsatisfiable' | undefined {
  if (!header) return undefined;
  const match = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!match || (match[1] === '' && match[2] === '')) return undefined;
  if (match[1] === '') {
    const suffix = Number(match[2]);
    if (suffix === 0 || size === 0) return 'unsatisfiable';
    return { start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(match[1]);
  const end = match[2] === '' ? size - 1 : Math.min(Number(match[2]), size - 1);
  if (match[2] !== '' && Number(match[2]) < start) return undefined;
  if (start >= size) return 'unsatisfiable';
  return { start, end };
}
