import type { MediaResource } from '@tessera/contracts';
import type { EntityManager } from 'typeorm';

/** The latest accepted upload of one of the hosted page's slots, as `enrollments.uploads` keeps it. */
export interface StoredUpload {
  slot: string;
  /** media-store's number of the upload within its slot: a later one replaces an earlier one, never back. */
  seq: number;
  documentType: string | null;
  side: string | null;
  kind: string;
  mime: string;
  addedAtUtc: string;
}

/**
 * Where an upload is kept: its slot, or `company_doc:<documentType>` for a typed company document. media-store
 * keeps one active upload per slot, but the newest company document of each type counts (companyDocuments),
 * so each type is a slot of its own on the page.
 */
export const uploadKey = (upload: { slot: string; documentType?: string | null }): string =>
  upload.slot === 'company_doc' && upload.documentType ? `company_doc:${upload.documentType}` : upload.slot;

/**
 * Records an upload media-store has just kept as the latest of its key (decision 0447), in the upload's
 * transaction under the applicant's lock. An older `seq` never overwrites a newer one. An untyped company
 * document counts only while it is the active one: any newer company document drops it.
 */
export async function recordUpload(
  manager: EntityManager,
  enrollmentId: string,
  resource: MediaResource,
): Promise<void> {
  const stored: StoredUpload = {
    slot: resource.slot,
    seq: resource.seq,
    documentType: resource.documentType,
    side: resource.side,
    kind: resource.kind,
    mime: resource.mime,
    addedAtUtc: resource.addedAtUtc,
  };
  const key = uploadKey(resource);
  await manager.query(
    `UPDATE enrollments
        SET uploads = (CASE WHEN $4 THEN uploads - 'company_doc' ELSE uploads END) || jsonb_build_object($2::text, $3::jsonb)
      WHERE id = $1 AND coalesce((uploads -> $2::text ->> 'seq')::int, 0) < $5`,
    [enrollmentId, key, JSON.stringify(stored), resource.slot === 'company_doc', resource.seq],
  );
}
