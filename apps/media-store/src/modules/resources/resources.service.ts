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
import { BlobNotFoundError, BlobRepository, type ByteRange } from './blobs/blob.repository';
import {
  ResourcesRepository,
  type ResourceFilter,
  SlotFullError,
  toMediaResource,
} from './resources.repository';
import { openTicket, sealTicket, type StagedUpload, storageKeyFor } from './staged-ticket';
import { TooLargeError, UnsupportedTypeError, UploadMeter } from './upload-meter';

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

/** A refusal of the meter or of a full slot as the answer the client gets; anything else unchanged (a 500). */
const asHttpError = (err: unknown): unknown =>
  err instanceof UnsupportedTypeError
    ? new AppException(415, err.message)
    : err instanceof TooLargeError
      ? new AppException(413, err.message)
      : err instanceof SlotFullError
        ? new AppException(409, err.message, undefined, SDK_ERROR_CODES.uploadLimit)
        : err;

/** Stores uploads (sniffed, hashed, size-limited while they stream) and serves their bytes and metadata. */
@Injectable()
export class ResourcesService {
  private readonly logger = new Logger(ResourcesService.name);

  constructor(
    private readonly repository: ResourcesRepository,
    private readonly blobs: BlobRepository,
    @Inject(APP_CONFIG) private readonly env: Env,
  ) {}

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
    return sealTicket(this.env.INTERNAL_SERVICE_TOKEN, target, await this.store(target, body));
  }

  /**
   * The second half: records a staged upload as the slot's active resource, with the slot's quota checked
   * again under its lock. A ticket committed before answers the same resource again. 400 for a ticket not
   * sealed for this owner; 409 for a full slot (the blob is removed).
   */
  async commit(target: UploadTarget, ticket: string): Promise<MediaResource> {
    const staged = this.staged(target, ticket);
    const recorded = await this.repository.findById(staged.id);
    if (recorded) return toMediaResource(recorded);
    return this.record(target, staged);
  }

  /** Removes the blob of a staged upload that will not be committed; one already committed stays. */
  async discard(target: UploadTarget, ticket: string): Promise<void> {
    const staged = this.staged(target, ticket);
    if (await this.repository.findById(staged.id)) return;
    await this.blobs.remove(staged.storageKey);
  }

  private staged(target: UploadTarget, ticket: string): StagedUpload {
    const staged = openTicket(this.env.INTERNAL_SERVICE_TOKEN, target, ticket);
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
    try {
      await this.blobs.put(storageKey, meter, 'application/octet-stream');
    } catch (caught) {
      body.unpipe(meter);
      body.resume();
      throw asHttpError(refusal ?? caught);
    } finally {
      body.off('close', aborted);
    }
    const mime = meter.mime;
    if (refusal || !mime || !meter.writableFinished) {
      // A driver that stopped reading early without failing must not leave a partial blob behind.
      await this.blobs.remove(storageKey).catch(() => undefined);
      throw asHttpError(refusal ?? new Error('Upload ended before the whole body was stored'));
    }
    return {
      id,
      storageKey,
      mime,
      sizeBytes: meter.size,
      sha256: meter.sha256,
      documentType: target.labels.documentType ?? null,
      source: target.labels.source ?? defaultSourceFor(target.slot),
    };
  }

  /** Records a stored upload as the slot's active resource, quota checked under the slot's lock. */
  private async record(target: UploadTarget, staged: StagedUpload): Promise<MediaResource> {
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
      );
      return toMediaResource(row);
    } catch (err) {
      await this.blobs
        .remove(staged.storageKey)
        .catch((e: unknown) => this.logger.warn(`Orphan blob ${staged.storageKey}: ${e}`));
      throw asHttpError(err);
    }
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
