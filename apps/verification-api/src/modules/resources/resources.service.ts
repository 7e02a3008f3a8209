import { HttpException, Inject, Injectable } from '@nestjs/common';
import { resourceIdFor, SecretBox, type SdkTokenClaims, verifyResourceId } from '@tessera/auth';
import {
  levelUploadSlots,
  MEDIA_SLOTS,
  type MediaKind,
  type MediaResource,
  type MediaSlot,
  type PartnerResourceMetadata,
  type ResourceListQuery,
  SLOT_CODES,
  slotForCode,
  uploadLabelsFor,
} from '@tessera/contracts';
import { APP_CONFIG, AppException, badRequest, notFound } from '@tessera/platform';
import type { FastifyRequest } from 'fastify';
import type { Multipart } from '@fastify/multipart';
import { DataSource } from 'typeorm';
import type { Env } from '../../config/env';
import { ApplicantsService } from '../applicants/applicants.service';
import type { PartnerContext } from '../products/products.service';
import { lockOpenSession, verificationSubmitted } from '../sessions/open-session-lock';
import { SessionContexts } from '../sessions/session-contexts';
import { recordUpload } from './enrollment-uploads';
import { FileRelay } from './file-relay';
import {
  type MediaBytes,
  type ConditionalHeaders,
  ResourcesRepository,
  type StagedUpload,
} from './resources.repository';

/** The contract's resource metadata plus the size and sha256 that media-store measured. */
export type ResourceMetadata = PartnerResourceMetadata & { sizeBytes: number; sha256: string };

const LABEL_FIELDS = new Set(['documentType', 'side', 'source']);
const UPLOADS_CLOSED = 'This verification was already submitted: uploads are closed';

/**
 * Verification-side access to media (media-store owns the bytes and schema `media`).
 *
 * Used by other modules (hosted SDK, step checks); these two signatures are stable:
 * - `listForEnrollment(productId, applicantId, enrollmentId, { activeOnly? })`: the uploads of one enrollment,
 *   newest first, in the contract's metadata shape (id, enrollmentId, kind, slot, documentType, side, mime,
 *   addedAtUtc, source, active) plus `sizeBytes` and `sha256`. `activeOnly` defaults to false (all uploads).
 * - `openBytes(productId, applicantId, resourceId)`: `{ mime, sizeBytes, stream }` of one upload, active or
 *   historical; the stream must be consumed or destroyed. Throws the platform's `notFound` (404) when the id
 *   is malformed, forged, or belongs to another applicant or product, or when no such upload exists.
 */
@Injectable()
export class ResourcesService {
  private readonly idKey: Buffer;

  constructor(
    private readonly repository: ResourcesRepository,
    private readonly applicants: ApplicantsService,
    private readonly contexts: SessionContexts,
    private readonly dataSource: DataSource,
    @Inject(APP_CONFIG) private readonly env: Env,
  ) {
    if (!env.SECRETS_MASTER_KEY) throw new Error('SECRETS_MASTER_KEY is required by verification-api');
    this.idKey = SecretBox.pepper(env.SECRETS_MASTER_KEY, 'resource-id');
  }

  async listForEnrollment(
    productId: string,
    applicantId: string,
    enrollmentId: string,
    opts: { activeOnly?: boolean } = {},
  ): Promise<ResourceMetadata[]> {
    const items = await this.repository.list({
      productId,
      applicantId,
      enrollmentId,
      activity: opts.activeOnly ? 'active' : 'all',
    });
    return items.map((item) => this.metadata(productId, item));
  }

  async openBytes(
    productId: string,
    applicantId: string,
    resourceId: string,
  ): Promise<{ mime: string; sizeBytes: number; stream: NodeJS.ReadableStream }> {
    const bytes = await this.bytes(productId, applicantId, resourceId, 'GET');
    return {
      mime: bytes.headers['content-type'],
      sizeBytes: Number(bytes.headers['content-length']),
      stream: bytes.body as NodeJS.ReadableStream,
    };
  }

  /** GET /v1/applicants/{externalUserId}/resources */
  async partnerList(partner: PartnerContext, externalUserId: string, query: ResourceListQuery) {
    const applicant = await this.applicants.resolve(partner, externalUserId);
    const items = await this.repository.list({
      productId: partner.productId,
      applicantId: applicant.id,
      enrollmentId: query.enrollmentId,
      kind: query.kind === 'all' ? undefined : (query.kind as MediaKind),
      activity: query.activeOnly ? 'active' : 'all',
    });
    const shaped = items.map((item) => this.partnerShape(this.metadata(partner.productId, item)));
    return { items: shaped, totalItems: shaped.length };
  }

  /** GET /v1/applicants/{externalUserId}/uploads/history: superseded uploads, each with its `resourceId`. */
  async partnerHistory(partner: PartnerContext, externalUserId: string) {
    const applicant = await this.applicants.resolve(partner, externalUserId);
    const items = await this.repository.list({
      productId: partner.productId,
      applicantId: applicant.id,
      activity: 'inactive',
    });
    const rows = items.map((item) => {
      const { id, ...rest } = this.partnerShape(this.metadata(partner.productId, item));
      return { resourceId: id, ...rest, supersededAtUtc: item.supersededAtUtc };
    });
    return { items: rows, totalItems: rows.length };
  }

  /** GET or HEAD /v1/applicants/{externalUserId}/resources/{resourceId}, Range, If-Range and If-None-Match passed on. */
  async partnerBytes(
    partner: PartnerContext,
    externalUserId: string,
    resourceId: string,
    method: 'GET' | 'HEAD',
    conditional?: ConditionalHeaders,
  ): Promise<MediaBytes> {
    const applicant = await this.applicants.resolve(partner, externalUserId);
    return this.bytes(partner.productId, applicant.id, resourceId, method, conditional);
  }

  /** POST /api/v1/sdk/uploads/{slot} (DECISIONS "Hosted SDK API"): the file part streams on to media-store. */
  async uploadFromSdk(session: SdkTokenClaims, slotParam: string, request: FastifyRequest) {
    const slot = MEDIA_SLOTS.find((s) => s === slotParam);
    if (!slot) throw badRequest(`Unknown slot ${slotParam}; expected one of ${MEDIA_SLOTS.join(', ')}`);
    if (!request.isMultipart()) throw badRequest('Expected multipart/form-data with a file part');
    // The guard's read of this request (it already refused an expired session): uploads close on submit.
    const context = await this.contexts.take(session);
    if (context) refuseSlotOutsideLevel(slot, levelUploadSlots(context.level.steps));
    if (context?.enrollmentStatus !== 'open') throw verificationSubmitted(UPLOADS_CLOSED);
    const fields: Record<string, string> = {};
    let relay: FileRelay<StagedUpload> | undefined;
    let staged: StagedUpload | undefined;
    try {
      for await (const part of request.parts()) {
        if (part.type === 'field') {
          // The labels travel with the PUT, which starts with the file: fields after it are ignored.
          if (LABEL_FIELDS.has(part.fieldname) && !relay) fields[part.fieldname] = String(part.value);
          continue;
        }
        if (part.fieldname !== 'file' || relay) {
          part.file.resume();
          continue;
        }
        relay = this.relayFile(session, slot, fields, part);
      }
      if (!relay) throw badRequest('A file part named "file" is required');
      // Only now, with the whole body read cleanly, may media-store keep the bytes (decision 0442). It keeps
      // them staged, unrecorded, and no lock is held while they reach it (decision 0457).
      staged = await relay.commit();
      const upload = staged;
      // The short commit: under the applicant's lock, so a submit that raced the upload comes wholly before
      // (409 here, the bytes thrown away) or after it (decision 0441); media-store checks the slot's quota again
      // as it records it; the enrollment records it as its slot's latest, so a reloaded page finds it (0447).
      const stored = await this.dataSource.transaction(async (manager) => {
        if (!(await lockOpenSession(manager, session.aid, session.sub)))
          throw verificationSubmitted(UPLOADS_CLOSED);
        const resource = await this.repository.commit(upload);
        await recordUpload(manager, session.sub, resource);
        return resource;
      });
      return this.partnerShape(this.metadata(session.pid, stored));
    } catch (err) {
      relay?.abort(err);
      // Never the bytes of an upload media-store recorded: it refuses to discard those.
      if (staged) await this.repository.discard(staged).catch(() => undefined);
      throw uploadFailure(err);
    }
  }

  private relayFile(
    session: SdkTokenClaims,
    slot: MediaSlot,
    fields: Record<string, string>,
    part: Multipart & { type: 'file' },
  ): FileRelay<StagedUpload> {
    const labels = uploadLabelsFor(slot).safeParse(fields);
    if (!labels.success) {
      part.file.resume();
      const issue = labels.error.issues[0];
      throw badRequest(`${issue.path.join('.')}: ${issue.message}`);
    }
    const target = {
      productId: session.pid,
      applicantId: session.aid,
      enrollmentId: session.sub,
      slot,
      labels: labels.data,
    };
    return new FileRelay(part.file, (body, done) => this.repository.stage(target, body, done));
  }

  private async bytes(
    productId: string,
    applicantId: string,
    resourceId: string,
    method: 'GET' | 'HEAD',
    conditional?: ConditionalHeaders,
  ): Promise<MediaBytes> {
    const parts = verifyResourceId(resourceId, { productId, applicantId }, this.idKey);
    const slot = parts && slotForCode(parts.slotLetter);
    if (!parts || !slot) throw notFound('Resource not found');
    return this.repository.open(
      { productId, applicantId, enrollmentId: parts.enrollmentId, slot, seq: parts.seq },
      method,
      conditional,
    );
  }

  private metadata(productId: string, item: MediaResource): ResourceMetadata {
    return {
      id: resourceIdFor(
        {
          productId,
          applicantId: item.applicantId,
          enrollmentId: item.enrollmentId,
          slotCode: `${SLOT_CODES[item.slot]}${item.seq}`,
        },
        this.idKey,
      ),
      enrollmentId: item.enrollmentId,
      kind: item.kind,
      slot: item.slot,
      documentType: item.documentType,
      side: item.side,
      mime: item.mime,
      addedAtUtc: item.addedAtUtc,
      source: item.source,
      active: item.active,
      sizeBytes: item.sizeBytes,
      sha256: item.sha256,
    };
  }

  private partnerShape({
    sizeBytes: _size,
    sha256: _sha,
    ...metadata
  }: ResourceMetadata): PartnerResourceMetadata {
    return metadata;
  }
}

/** 400 for a slot no step of the session's level uses (decision 0483): its bytes would never be read. */
function refuseSlotOutsideLevel(slot: MediaSlot, used: readonly string[]): void {
  if (used.includes(slot)) return;
  throw badRequest(
    used.length === 0
      ? `Slot ${slot} is not used by this verification level, which takes no uploads`
      : `Slot ${slot} is not used by this verification level; expected one of ${used.join(', ')}`,
  );
}

/** The multipart parser's refusals of a body's shape (@fastify/multipart codes), as the client's 400. */
const MULTIPART_REFUSALS: Record<string, string> = {
  FST_FILES_LIMIT: 'Only one file part is accepted',
  FST_FIELDS_LIMIT: 'Too many fields',
  FST_PARTS_LIMIT: 'Too many parts',
  FST_INVALID_JSON_FIELD_ERROR: 'A JSON field is not valid JSON',
};

/**
 * What a failed SDK upload answers. Our own refusals (labels, media-store's 413/415/400, 408, 502, 504) stand;
 * the multipart cap is 413, the parser's other limits 400. A plain Error without a code comes from the
 * multipart parser (busboy): a missing or unterminated boundary, a file part cut short; it was answered 500,
 * and it is the client's malformed body. Anything else (media-store unreachable: the filter's 503) goes on.
 */
function uploadFailure(err: unknown): unknown {
  if (err instanceof HttpException) return err;
  const code = (err as { code?: unknown }).code;
  if (code === 'FST_REQ_FILE_TOO_LARGE') return new AppException(413, 'The file is too large');
  if (typeof code === 'string' && MULTIPART_REFUSALS[code]) return badRequest(MULTIPART_REFUSALS[code]);
  if (typeof code === 'string' && code.startsWith('FST_')) return badRequest('Malformed multipart body');
  if (code === undefined && err instanceof Error && err.constructor === Error) {
    return badRequest('Malformed multipart body');
  }
  return err;
}
