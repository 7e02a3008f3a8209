import { Inject, Injectable } from '@nestjs/common';
import { isTwoSidedDocument, type MediaSlot } from '@tessera/contracts';
import { APP_CONFIG } from '@tessera/platform';
import type { Env } from '../../config/env';
import type { LevelEntity } from '../levels/entities/level.entity';
import type { CheckResult, CheckSubject } from '../reviews/check-results.repository';
import { companyDocuments } from '../resources/company-documents';
import { forOperator, passed, retry } from './check-results';
import { type ResourceMetadata, ResourcesService } from '../resources/resources.service';
import { type ImageInspection, MediaInspectorService } from './media-inspector.service';

/** HEIC/HEIF needs an HEVC decoder the prebuilt libvips lacks: such a photo is not the applicant's fault. */
const HEIF_MIMES = new Set(['image/heic', 'image/heif']);

/** One problem a media check found, with the label the applicant's rejection carries. */
interface Problem {
  label: string;
  item: string;
  detail: string;
}

/** A measured upload, kept in `check_result` for the operator. */
interface Measured {
  slot: MediaSlot;
  resourceId: string;
  documentType: string | null;
  mime: string;
  sizeBytes: number;
  width?: number;
  height?: number;
  durationSeconds?: number;
  error?: string;
}

export const MEDIA_CHECK_KINDS = [
  'identity_doc',
  'selfie',
  'liveness',
  'poa',
  'company_docs',
  'company_documents',
] as const;

/**
 * identity_doc, selfie, liveness, poa and company_docs/company_documents (decision 0133): the step's
 * enrollment's active uploads present and readable. Problems the applicant can fix are RED `RETRY` with
 * labels; an upload the service cannot judge (a HEIC photo) goes to an operator.
 */
@Injectable()
export class MediaChecksService {
  constructor(
    private readonly resources: ResourcesService,
    private readonly inspector: MediaInspectorService,
    @Inject(APP_CONFIG) private readonly env: Env,
  ) {}

  async check(subject: CheckSubject, level: LevelEntity): Promise<CheckResult> {
    const all = subject.enrollmentId
      ? await this.resources.listForEnrollment(subject.productId, subject.applicantId, subject.enrollmentId)
      : [];
    const uploads = all.filter((u) => u.active);
    // listForEnrollment is newest first: the first of a slot is the one that counts.
    const inSlot = (slot: MediaSlot) => uploads.filter((u) => u.slot === slot);
    const problems: Problem[] = [];
    const measured: Measured[] = [];
    const undecided: string[] = [];
    const inspectImage = async (upload: ResourceMetadata, label: string) => {
      const result = await this.image(subject, upload);
      measured.push(result.measured);
      if (result.problem) problems.push({ ...result.problem, label: result.problem.label || label });
      if (result.undecided) undecided.push(result.undecided);
    };

    switch (subject.kind) {
      case 'identity_doc': {
        const [front] = inSlot('document_front');
        if (!front) {
          problems.push({
            label: 'DOCUMENT_MISSING',
            item: 'document_front',
            detail: 'no front side uploaded',
          });
          break;
        }
        await inspectImage(front, 'UNREADABLE_DOCUMENT');
        if (!front.documentType) {
          problems.push({
            label: 'DOCUMENT_TYPE_MISSING',
            item: 'document_front.documentType',
            detail: 'the document type is not set',
          });
          break;
        }
        const [back] = inSlot('document_back');
        if (back) await inspectImage(back, 'UNREADABLE_DOCUMENT');
        else if (isTwoSidedDocument(front.documentType)) {
          problems.push({
            label: 'DOCUMENT_MISSING',
            item: 'document_back',
            detail: `a ${front.documentType} needs its back side`,
          });
        }
        break;
      }
      case 'selfie': {
        const [selfie] = inSlot('selfie');
        if (!selfie) problems.push({ label: 'SELFIE_MISSING', item: 'selfie', detail: 'no selfie uploaded' });
        else await inspectImage(selfie, 'UNREADABLE_SELFIE');
        break;
      }
      case 'liveness': {
        const [clip] = inSlot('liveness_video');
        if (!clip) {
          problems.push({ label: 'LIVENESS_MISSING', item: 'liveness_video', detail: 'no clip uploaded' });
          break;
        }
        const result = await this.video(subject, clip);
        measured.push(result.measured);
        if (result.problem) problems.push(result.problem);
        break;
      }
      case 'poa': {
        // The hosted SDK's convention: the proof of address is an `additional` upload (image or pdf).
        const [doc] = inSlot('additional');
        if (!doc) {
          problems.push({
            label: 'PROOF_OF_ADDRESS_MISSING',
            item: 'additional',
            detail: 'no proof of address uploaded',
          });
        } else if (doc.kind === 'image') await inspectImage(doc, 'UNREADABLE_DOCUMENT');
        else measured.push(this.describe(doc));
        break;
      }
      default: {
        // company_docs / company_documents: a company_doc of each required type, and enough of them.
        const docs = companyDocuments(all);
        measured.push(...docs.map((d) => this.describe(d)));
        const types = new Set(docs.map((d) => d.documentType).filter((t): t is string => !!t));
        for (const type of level.companyRequiredDocuments) {
          if (!types.has(type)) {
            problems.push({
              label: 'COMPANY_DOCUMENTS_MISSING',
              item: `company_doc:${type}`,
              detail: `no ${type} uploaded`,
            });
          }
        }
        const min = level.companyDocumentsMinRequired ?? Math.max(1, level.companyRequiredDocuments.length);
        if (docs.length < min) {
          problems.push({
            label: 'COMPANY_DOCUMENTS_MISSING',
            item: 'company_doc',
            detail: `${docs.length} of at least ${min} documents uploaded`,
          });
        }
      }
    }
    return this.result(subject.kind, problems, measured, undecided);
  }

  private async image(
    subject: CheckSubject,
    upload: ResourceMetadata,
  ): Promise<{ measured: Measured; problem?: Problem; undecided?: string }> {
    const measured = this.describe(upload);
    const { stream } = await this.resources.openBytes(subject.productId, subject.applicantId, upload.id);
    const inspection: ImageInspection = await this.inspector.image(stream);
    if (!inspection.ok) {
      measured.error = inspection.error;
      if (HEIF_MIMES.has(upload.mime)) {
        return { measured, undecided: `${upload.slot}: ${upload.mime} cannot be decoded here` };
      }
      return { measured, problem: { label: '', item: upload.slot, detail: 'the image cannot be decoded' } };
    }
    measured.width = inspection.width;
    measured.height = inspection.height;
    const long = Math.max(inspection.width, inspection.height);
    const short = Math.min(inspection.width, inspection.height);
    const minLong = this.env.CHECKS_IMAGE_MIN_LONG_SIDE;
    const minShort = this.env.CHECKS_IMAGE_MIN_SHORT_SIDE;
    if (long < minLong || short < minShort) {
      return {
        measured,
        problem: {
          label: 'LOW_QUALITY',
          item: upload.slot,
          detail: `${inspection.width}x${inspection.height} px is below ${minLong}x${minShort}`,
        },
      };
    }
    return { measured };
  }

  private async video(
    subject: CheckSubject,
    upload: ResourceMetadata,
  ): Promise<{ measured: Measured; problem?: Problem }> {
    const measured = this.describe(upload);
    const { stream } = await this.resources.openBytes(subject.productId, subject.applicantId, upload.id);
    const inspection = await this.inspector.video(stream);
    if (!inspection.ok) {
      measured.error = inspection.error;
      return {
        measured,
        problem: { label: 'UNREADABLE_VIDEO', item: upload.slot, detail: 'the clip cannot be read' },
      };
    }
    measured.durationSeconds = inspection.durationSeconds;
    const min = this.env.CHECKS_LIVENESS_MIN_SECONDS;
    const max = this.env.CHECKS_LIVENESS_MAX_SECONDS;
    if (inspection.durationSeconds < min || inspection.durationSeconds > max) {
      return {
        measured,
        problem: {
          label: 'LIVENESS_DURATION',
          item: upload.slot,
          detail: `the clip lasts ${inspection.durationSeconds} s, outside ${min}-${max} s`,
        },
      };
    }
    return { measured };
  }

  private describe(upload: ResourceMetadata): Measured {
    return {
      slot: upload.slot,
      resourceId: upload.id,
      documentType: upload.documentType,
      mime: upload.mime,
      sizeBytes: upload.sizeBytes,
    };
  }

  private result(kind: string, problems: Problem[], measured: Measured[], waiting: string[]): CheckResult {
    const details = {
      check: kind,
      uploads: measured,
      problems: problems.map(({ label, item, detail }) => ({ label, item, detail })),
    };
    if (problems.length > 0) {
      return retry(
        details,
        problems.map((p) => ({ label: p.label, comment: `${p.item}: ${p.detail}` })),
      );
    }
    return waiting.length > 0 ? forOperator(details, waiting.join('; ')) : passed(details);
  }
}
