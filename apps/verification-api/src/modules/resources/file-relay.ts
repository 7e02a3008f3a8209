import { AppException } from '@tessera/platform';
import type { Readable } from 'node:stream';

/**
 * The file part of an SDK upload on its way to media-store (decision 0442). Its bytes stream on as they
 * arrive, but media-store keeps an upload only when its PUT ends normally, and the PUT ends only on
 * `commit()`, once the whole multipart body has been read without error. `abort()`, or the parser cutting the
 * file at the upload cap, destroys the PUT instead: media-store stores nothing and the slot's previous
 * upload stays active.
 */
export class FileRelay<T> {
  private readonly stored: Promise<T>;
  private readonly done: Promise<void>;
  private settle!: { end: () => void; fail: (reason: Error) => void };

  constructor(
    private readonly file: Readable,
    send: (body: Readable, done: Promise<void>) => Promise<T>,
  ) {
    this.done = new Promise<void>((end, fail) => (this.settle = { end, fail }));
    // A PUT that never started (media storage not configured) leaves nobody waiting for `done`.
    this.done.catch(() => undefined);
    // The parser ends a file cut at the cap as if it were whole ('limit'): it is not the file.
    file.once('limit', () => this.abort(new AppException(413, 'The file is too large')));
    this.stored = send(file, this.done);
    // media-store refused early (415, 413): the rest of the part is drained so the body can be read to its end.
    this.stored.catch(() => this.drain());
  }

  /** The whole body was read cleanly: the PUT ends, and media-store keeps the bytes. */
  commit(): Promise<T> {
    if (this.file.readableEnded) this.settle.end();
    else this.abort(new Error('The file part ended early'));
    return this.stored;
  }

  /** Something in the body went wrong: media-store stores nothing of this upload. */
  abort(reason: unknown): void {
    this.drain();
    this.settle.fail(reason instanceof Error ? reason : new Error('Upload aborted'));
  }

  private drain(): void {
    this.file.unpipe();
    this.file.resume();
  }
}
