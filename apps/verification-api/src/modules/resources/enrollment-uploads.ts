import type { MediaResource } from '@tessera/contracts';
import type { EntityManager } from 'typeorm';
import { companyDocuments } from './company-documents';

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
 * The enrollment's record after `upload` (decision 0447): the latest upload of each key, by the rule the step
 * submit and the checks apply to media-store's list (companyDocuments), so the page and the submit never
 * disagree. Each slot's newest upload (highest `seq`) is its active one, as in media-store; an older `seq`
 * never replaces a newer one.
 */
export function withUpload(
  current: Record<string, StoredUpload>,
  upload: StoredUpload,
): Record<string, StoredUpload> {
  const newestFirst = [...Object.values(current), upload].sort((a, b) => b.seq - a.seq);
  const activeSeq = new Map<string, number>();
  for (const u of newestFirst) if (!activeSeq.has(u.slot)) activeSeq.set(u.slot, u.seq);
  const uploads = newestFirst.map((u) => ({ ...u, active: activeSeq.get(u.slot) === u.seq }));
  const kept = [...uploads.filter((u) => u.slot !== 'company_doc' && u.active), ...companyDocuments(uploads)];
  return Object.fromEntries(kept.map(({ active: _active, ...u }) => [uploadKey(u), u]));
}

/**
 * Records an upload media-store has just kept as the latest of its key (withUpload), in the upload's
 * transaction under the applicant's lock, which every writer of the record holds: the read sees the last one.
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
  const [row] = await manager.query<{ uploads: Record<string, StoredUpload> | null }[]>(
    'SELECT uploads FROM enrollments WHERE id = $1',
    [enrollmentId],
  );
  if (!row) return;
  await manager.query('UPDATE enrollments SET uploads = $2::jsonb WHERE id = $1', [
    enrollmentId,
    JSON.stringify(withUpload(row.uploads ?? {}, stored)),
  ]);
}
