import type { MediaResource } from '@tessera/contracts';
import { AppException } from '@tessera/platform';
import { PassThrough, type Readable } from 'node:stream';

/**
 * The file part of an SDK upload on its way to media-store (decision 0442). Its bytes stream on as they
 * arrive, but media-store keeps an upload only when its PUT ends normally, and the PUT ends only on
 * `commit()`, once the whole multipart body has been read without error. `abort()`, or the parser cutting the
 * file at the upload cap, destroys the PUT instead: media-store stores nothing and the slot's previous
 * upload stays active.
 */
export class FileRelay {
  private readonly body = new PassThrough();
  private readonly stored: Promise<MediaResource>;

  constructor(
    private readonly file: Readable,
    send: (body: Readable) => Promise<MediaResource>,
  ) {
    // The parser ends a file cut at the cap as if it were whole ('limit'): it is not the file.
    file.once('limit', () => this.abort(new AppException(413, 'The file is too large')));
    file.pipe(this.body, { end: false });
    this.stored = send(this.body);
    // media-store refused early (415, 413): the rest of the part is drained so the body can be read to its end.
    this.stored.catch(() => this.drain());
  }

  /** The whole body was read cleanly: the PUT ends, and media-store records the upload. */
  commit(): Promise<MediaResource> {
    if (this.file.readableEnded) this.body.end();
    else this.abort(new Error('The file part ended early'));
    return this.stored;
  }

  /** Something in the body went wrong: media-store stores nothing of this upload. */
  abort(reason: unknown): void {
    this.drain();
    this.body.destroy(reason instanceof Error ? reason : new Error('Upload aborted'));
  }

  private drain(): void {
    this.file.unpipe(this.body);
    this.file.resume();
  }
}
