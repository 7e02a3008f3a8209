import { isTwoSidedDocument, SDK_SERVER_STEP_KINDS, STEP_MEDIA_SLOTS } from '@tessera/contracts';
import { companyDocuments } from '../resources/company-documents';
import type { LevelEntity } from '../levels/entities/level.entity';

/** The part of a stored resource's metadata the presence rules read. */
export interface ResourceSummary {
  slot: string;
  documentType?: string | null;
  active: boolean;
}

/** Step kinds whose data the user provides through uploads. */
export const isMediaStep = (kind: string): boolean => kind in STEP_MEDIA_SLOTS;

/** Step kinds the end user completes on the hosted page (everything but the server-run screenings). */
export const takesUserInput = (kind: string): boolean =>
  !(SDK_SERVER_STEP_KINDS as readonly string[]).includes(kind);

const has = (v: unknown) => v !== undefined && v !== null && v !== '';

/** The first required field (level key) without a value, or undefined. */
export const missingField = (required: string[], values: Record<string, unknown>): string | undefined =>
  required.find((key) => !has(values[key]));

/**
 * The first missing upload of a media step, named as the user would fix it (`document_front`,
 * `document_back`, `selfie`, `liveness_video`, `company_doc:<type>`...), or undefined when it is complete.
 * `resources` are the enrollment's uploads newest first, superseded ones included: only active ones count,
 * except company documents, where the newest upload of each document type counts (companyDocuments).
 */
export function missingUpload(
  kind: string,
  level: Pick<LevelEntity, 'companyRequiredDocuments' | 'companyDocumentsMinRequired'>,
  resources: ResourceSummary[],
): string | undefined {
  const active = resources.filter((r) => r.active);
  const inSlot = (slot: string) => active.filter((r) => r.slot === slot);
  switch (kind) {
    case 'identity_doc': {
      const [front] = inSlot('document_front');
      if (!front) return 'document_front';
      if (!front.documentType) return 'document_front.documentType';
      if (isTwoSidedDocument(front.documentType) && inSlot('document_back').length === 0) {
        return 'document_back';
      }
      return undefined;
    }
    case 'selfie':
      return inSlot('selfie').length > 0 ? undefined : 'selfie';
    case 'liveness':
      return inSlot('liveness_video').length > 0 ? undefined : 'liveness_video';
    case 'poa':
      return inSlot('additional').length > 0 ? undefined : 'additional';
    case 'company_docs':
    case 'company_documents': {
      const docs = companyDocuments(resources);
      const types = new Set(docs.map((d) => d.documentType).filter(Boolean));
      const absent = level.companyRequiredDocuments.find((type) => !types.has(type));
      if (absent) return `company_doc:${absent}`;
      const min = level.companyDocumentsMinRequired ?? Math.max(1, level.companyRequiredDocuments.length);
      return docs.length >= min ? undefined : 'company_doc';
    }
    default:
      return undefined;
  }
}
