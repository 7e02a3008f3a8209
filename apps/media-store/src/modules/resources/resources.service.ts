import { Inject, Injectable, Logger } from '@nestjs/common';
import {
  defaultSourceFor,
  SDK_ERROR_CODES,
  MEDIA_MIME_KINDS,
  type MediaKind,
  type MediaResource,
  type MediaSlot,
  sideForSlot,
  SLOT_ALLOWED_MIMES,
  type UploadLabels,
} from '@tessera/contracts';
import { APP_CONFIG, AppException, badRequest, notFound } from '@tessera/platform';
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Readable } from 'node:stream';
import type { Env } from '../../config/env';
import {
  BlobNotFoundError,
  BlobRepository,
  type ByteRange,
  asStorageError,
  storageUnavailable,
} from './blobs/blob.repository';
import {
  ResourcesRepository,
  type ResourceFilter,
  SlotFullError,
  StagedUploadGoneError,
  toMediaResource,
} from './resources.repository';
import {
  openTicket,
  sealTicket,
  type StagedUpload,
  storageKeyFor,
  type TicketKeys,
  ticketKeysFrom,
} from './staged-ticket';
import { EmptyFileError, TooLargeError, UnsupportedTypeError, UploadMeter } from './upload-meter';

export interface UploadTarget {
  productId: string;
  applicantId: string;
  enrollmentId: string;
  slot: MediaSlot;
  labels: UploadLabels;
}

export interface ResourceKey {
  productId: string;
  applicantId: string;
  enrollmentId: string;
  slot: MediaSlot;
  seq: number;
}

/**
 * `x-error-code` of a commit whose staged upload expired and was swept (decision 0460), and of an upload whose
 * body took longer than MEDIA_STAGED_TTL_SECONDS to arrive (decision 0464).
 */
export const STAGED_UPLOAD_EXPIRED = 'staged_upload_expired';

const stagedUploadExpired = (
  message = 'ticket: the staged upload expired and its bytes were removed; upload the file again',
) => new AppException(410, message, undefined, STAGED_UPLOAD_EXPIRED);

/**
 * A refusal of the meter or of a full slot as the answer the client gets, and a storage that failed under the
 * upload (the driver's error may reach the meter first, decision 0493) as 503; anything else unchanged (a 500).
 */
const asHttpError = (err: unknown): unknown =>
  storageUnavailable(err)
    ? asStorageError(err)
    : err instanceof UnsupportedTypeError
      ? new AppException(415, err.message)
      : err instanceof EmptyFileError
        ? new AppException(400, err.message)
        : err instanceof TooLargeError
          ? new AppException(413, err.message)
          : err instanceof SlotFullError
            ? new AppException(409, err.message, undefined, SDK_ERROR_CODES.uploadLimit)
            : err;

/** Stores uploads (sniffed, hashed, size-limited while they stream) and serves their bytes and metadata. */
@Injectable()
export class ResourcesService {
  private readonly logger = new Logger(ResourcesService.name);
  private readonly tickets: TicketKeys;

  constructor(
    private readonly repository: ResourcesRepository,
    private readonly blobs: BlobRepository,
    @Inject(APP_CONFIG) private readonly env: Env,
  ) {
    this.tickets = ticketKeysFrom(env);
    if (!env.MEDIA_TICKET_SECRET)
      this.logger.warn(
        'MEDIA_TICKET_SECRET is unset: staged-upload tickets are keyed by INTERNAL_SERVICE_TOKEN, so rotating it ' +
          'fails the uploads in flight (docs/deploy.md, "Rotating media-store secrets")',
      );
  }

  limitFor(kind: MediaKind): number {
    return kind === 'video' ? this.env.MEDIA_MAX_VIDEO_BYTES : this.env.MEDIA_MAX_IMAGE_BYTES;
  }

  /**
   * Streams `body` to blob storage and records it as the slot's active resource. A type not allowed for the
   * slot gives 415 and more than the kind's limit gives 413; then, as when the client goes away, no row, no
   * blob and no temporary file remain.
   */
  async upload(target: UploadTarget, body: IncomingMessage | Readable): Promise<MediaResource> {
    return this.record(target, await this.store(target, body));
  }

  /**
   * The first half of an upload (decision 0457): streams `body` to blob storage, refused as `upload` refuses,
   * and hands it back as a ticket without recording it. Only `commit` of the ticket makes it the slot's upload.
   */
  async stage(target: UploadTarget, body: IncomingMessage | Readable): Promise<string> {
    return sealTicket(this.tickets, target, await this.store(target, body));
  }

  /**
   * The second half: records a staged upload as the slot's active resource, with the slot's quota checked
   * again under its lock. A ticket committed before answers the same resource again. 400 for a ticket not
   * sealed for this owner; 409 for a full slot (the blob is removed); 410 when the staged upload expired and
   * was swept, or was discarded (decision 0460): nothing is recorded.
   */
  async commit(target: UploadTarget, ticket: string): Promise<MediaResource> {
    const staged = this.staged(target, ticket);
    const recorded = await this.repository.findById(staged.id);
    if (recorded) return toMediaResource(recorded);
    return this.record(target, staged);
  }

  /**
   * Removes the blob of a staged upload that will not be committed; one already committed stays. A commit racing
   * the discard either records the upload first (then nothing is removed) or answers 410.
   */
  async discard(target: UploadTarget, ticket: string): Promise<void> {
    const staged = this.staged(target, ticket);
    if (await this.repository.discardStaged(staged.id, () => this.blobs.remove(staged.storageKey))) return;
    // Not staged: committed (kept), or swept or discarded before (nothing left), or staged by a media-store
    // older than decision 0460 (no row): its bytes go as they always did.
    if (await this.repository.findById(staged.id)) return;
    await this.blobs.remove(staged.storageKey);
  }

  private staged(target: UploadTarget, ticket: string): StagedUpload {
    const staged = openTicket(this.tickets, target, ticket);
    if (!staged) throw badRequest('ticket: not a staged upload of this slot');
    return staged;
  }

  /** Streams `body` into blob storage through the meter; nothing is left behind when it is refused. */
  private async store(target: UploadTarget, body: IncomingMessage | Readable): Promise<StagedUpload> {
    // A full slot is refused before a byte is stored (and again under the slot's lock, for uploads in flight).
    const quota = this.env.MEDIA_MAX_UPLOADS_PER_SLOT;
    if ((await this.repository.uploadsIn(target.enrollmentId, target.slot)) >= quota) {
      body.resume();
      throw asHttpError(new SlotFullError(quota));
    }
    const meter = new UploadMeter(SLOT_ALLOWED_MIMES[target.slot], (mime) =>
      this.limitFor(MEDIA_MIME_KINDS[mime]),
    );
    // The request is piped, not pipelined: a refusal must leave the socket open for the 415/413 answer.
    const aborted = () => {
      if (!(body as IncomingMessage).complete) meter.destroy(new Error('Upload aborted by the client'));
    };
    body.once('close', aborted);
    body.once('error', (err) => meter.destroy(err));
    // The storage driver may still be preparing (mkdir, bucket check) when the meter refuses the upload.
    let refusal: unknown;
    meter.on('error', (err) => (refusal ??= err));
    body.pipe(meter);
    const id = randomUUID();
    const storageKey = storageKeyFor(target, id);
    // Noted before a byte is stored: bytes never committed (a caller that died, a lost discard, a crash here)
    // are swept after MEDIA_STAGED_TTL_SECONDS (decision 0460).
    try {
      await this.repository.recordStaged(id, storageKey);
    } catch (err) {
      body.resume();
      throw err;
    }
    try {
      await this.blobs.put(storageKey, meter, 'application/octet-stream');
    } catch (caught) {
      body.unpipe(meter);
      body.resume();
      if (storageUnavailable(caught) || storageUnavailable(refusal)) {
        // Storage away (decision 0493): answer the 503 now. Bytes may have reached it before it hung, so the
        // staged row goes only once they are removed; otherwise it stays for the sweeper.
        void this.removeThenForget(id, storageKey);
      } else {
        await this.forget(id);
      }
      throw asHttpError(refusal ?? caught);
    } finally {
      body.off('close', aborted);
    }
    const mime = meter.mime;
    if (refusal || !mime || !meter.writableFinished) {
      // A driver that stopped reading early without failing must not leave a partial blob behind.
      await this.removeThenForget(id, storageKey);
      throw asHttpError(refusal ?? new Error('Upload ended before the whole body was stored'));
    }
    // The body took longer than MEDIA_STAGED_TTL_SECONDS: a sweep may have taken the row while the bytes were
    // still coming (it found nothing to remove), so these late bytes are nobody's. They go, like the row: never
    // a ticket for an upload the sweep no longer knows of (decision 0464).
    if (!(await this.repository.confirmStaged(id, storageKey, this.env.MEDIA_STAGED_TTL_SECONDS))) {
      await this.removeThenForget(id, storageKey);
      throw stagedUploadExpired(
        'The upload took longer than MEDIA_STAGED_TTL_SECONDS and expired; its bytes were removed: upload the file again',
      );
    }
    return {
      id,
      storageKey,
      mime,
      sizeBytes: meter.size,
      sha256: meter.sha256,
      documentType: target.labels.documentType ?? null,
      source: target.labels.source ?? defaultSourceFor(target.slot),
      hasRow: true,
    };
  }

  /** Removes bytes that will not be recorded, then their staged row; the sweeper retries whatever fails. */
  private removeThenForget(id: string, storageKey: string): Promise<void> {
    return this.blobs.remove(storageKey).then(
      () => this.forget(id),
      (e: unknown) => this.logger.warn(`Blob ${storageKey} left to the sweeper: ${e}`),
    );
  }

  /** Drops the staged row of an upload whose bytes are gone; the sweeper retries when this fails. */
  private forget(id: string): Promise<void> {
    return this.repository
      .forgetStaged(id)
      .catch((e: unknown) => this.logger.warn(`Staged row ${id} left to the sweeper: ${e}`));
  }

  /**
   * Records a stored upload as the slot's active resource, quota checked under the slot's lock, its staged row
   * deleted in the same transaction. 410 when that row is gone with its bytes (swept or discarded).
   */
  private async record(target: UploadTarget, staged: StagedUpload): Promise<MediaResource> {
    try {
      return await this.insert(target, staged, true);
    } catch (err) {
      if (!(err instanceof StagedUploadGoneError)) throw err;
      if (staged.hasRow) {
        // Its row is gone, so it expired (swept, or discarded): whoever removed the row removed the bytes first,
        // and any bytes still there are nobody's and go now (decision 0464). Never recorded.
        await this.blobs
          .remove(staged.storageKey)
          .catch((e: unknown) => this.logger.error(`Late blob ${staged.storageKey} not removed: ${e}`));
        throw stagedUploadExpired();
      }
      // A ticket of a media-store older than decision 0460 (no row): no bytes, discarded; bytes, recorded, as
      // before (nothing sweeps or discards them now).
      if (!(await this.blobs.exists(staged.storageKey))) throw stagedUploadExpired();
      return this.insert(target, staged, false);
    }
  }

  private async insert(
    target: UploadTarget,
    staged: StagedUpload,
    fromStaged: boolean,
  ): Promise<MediaResource> {
    try {
      const row = await this.repository.insertActive(
        {
          id: staged.id,
          tenantId: target.productId,
          applicantId: target.applicantId,
          enrollmentId: target.enrollmentId,
          slot: target.slot,
          kind: MEDIA_MIME_KINDS[staged.mime],
          mime: staged.mime,
          sizeBytes: staged.sizeBytes,
          sha256: staged.sha256,
          storageKey: staged.storageKey,
          documentType: staged.documentType,
          side: sideForSlot(target.slot),
          source: staged.source,
        },
        this.env.MEDIA_MAX_UPLOADS_PER_SLOT,
        fromStaged,
      );
      return toMediaResource(row);
    } catch (err) {
      if (err instanceof StagedUploadGoneError) throw err;
      // Not recorded (a full slot, a failure): the bytes go, then the staged row (left to the sweeper if the
      // bytes could not be removed).
      await this.blobs.remove(staged.storageKey).then(
        () => (fromStaged ? this.forget(staged.id) : undefined),
        (e: unknown) => this.logger.warn(`Blob ${staged.storageKey} left to the sweeper: ${e}`),
      );
      throw asHttpError(err);
    }
  }

  /**
   * One sweep (decision 0460): the bytes of staged uploads older than MEDIA_STAGED_TTL_SECONDS are removed, a
   * batch per transaction, repeated while batches come back full and wholly removed. Safe on every replica at
   * once. Answers how many were removed.
   */
  async sweepStaged(keepGoing: () => boolean = () => true): Promise<number> {
    const batch = this.env.MEDIA_STAGED_SWEEP_BATCH;
    let total = 0;
    for (;;) {
      const { expired, removed } = await this.repository.sweepStaged(
        this.env.MEDIA_STAGED_TTL_SECONDS,
        batch,
        async ({ storageKey }) => {
          try {
            await this.blobs.remove(storageKey);
            return true;
          } catch (e) {
            this.logger.warn(`Expired staged blob ${storageKey} not removed, retried next sweep: ${e}`);
            return false;
          }
        },
      );
      total += removed;
      if (expired < batch || removed < expired || !keepGoing()) return total;
    }
  }

  /**
   * Removes the bytes of uploads a dead process left half-written (decision 0498), those untouched for
   * MEDIA_STAGED_TTL_SECONDS: far longer than any upload that verification-api still waits for (its relay gives up
   * after MEDIA_STORE_TIMEOUT_MS, and a cut connection cleans up after itself). Answers how many were removed.
   */
  sweepLeftovers(): Promise<number> {
    return this.blobs.sweepLeftovers(new Date(Date.now() - this.env.MEDIA_STAGED_TTL_SECONDS * 1000));
  }

  async list(filter: ResourceFilter): Promise<MediaResource[]> {
    return (await this.repository.find(filter)).map(toMediaResource);
  }

  /** The metadata and storage key of one upload; 404 when this product and applicant have no such upload. */
  async find(key: ResourceKey): Promise<{ resource: MediaResource; storageKey: string }> {
    const row = await this.repository.findOne({
      tenantId: key.productId,
      applicantId: key.applicantId,
      enrollmentId: key.enrollmentId,
      slot: key.slot,
      seq: key.seq,
    });
    if (!row) throw notFound('Resource not found');
    return { resource: toMediaResource(row), storageKey: row.storageKey };
  }

  async read(storageKey: string, range?: ByteRange): Promise<Readable> {
    try {
      return await this.blobs.read(storageKey, range);
    } catch (err) {
      if (!(err instanceof BlobNotFoundError)) throw err;
      // The row says the bytes exist and the store disagrees: an operator must look (restore from backup, or
      // delete the row). The caller gets a plain 404, never a 500 with the storage key in it.
      this.logger.error(`Stored resource has no blob: ${storageKey}`);
      throw notFound('Resource content does not exist');
    }
  }
}
