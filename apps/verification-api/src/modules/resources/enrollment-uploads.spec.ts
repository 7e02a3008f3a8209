import { companyDocuments } from './company-documents';
import { type StoredUpload, uploadKey, withUpload } from './enrollment-uploads';

const upload = (slot: string, seq: number, documentType: string | null = null): StoredUpload => ({
  slot,
  seq,
  documentType,
  side: null,
  kind: 'image',
  mime: 'image/png',
  addedAtUtc: new Date(seq * 1000).toISOString(),
});

/** The record after `uploads`, recorded one by one in this order. */
const recorded = (uploads: StoredUpload[]) =>
  uploads.reduce<Record<string, StoredUpload>>((record, u) => withUpload(record, u), {});

/** What the step submit counts of the same uploads, as media-store lists them (newest first, one active a slot). */
function submitCounts(uploads: StoredUpload[]): string[] {
  const newestFirst = [...uploads].sort((a, b) => b.seq - a.seq);
  const listed = newestFirst.map((u) => ({
    ...u,
    active: newestFirst.find((o) => o.slot === u.slot) === u,
  }));
  return [...listed.filter((u) => u.slot !== 'company_doc' && u.active), ...companyDocuments(listed)]
    .map(uploadKey)
    .sort();
}

describe('the enrollment record of uploads (withUpload)', () => {
  it('keeps what the step submit counts: the newest company document of each type, an untyped one only while newest', () => {
    const sequences: StoredUpload[][] = [
      [upload('company_doc', 1, 'a'), upload('company_doc', 2), upload('company_doc', 3, 'b')],
      [upload('company_doc', 1), upload('company_doc', 2, 'a')],
      [upload('company_doc', 1, 'a'), upload('company_doc', 2)],
      [upload('company_doc', 1, 'a'), upload('company_doc', 2, 'a'), upload('company_doc', 3)],
      [upload('selfie', 1), upload('document_front', 1, 'passport'), upload('selfie', 2)],
    ];
    for (const uploads of sequences) {
      expect(Object.keys(recorded(uploads)).sort()).toEqual(submitCounts(uploads));
    }
  });

  it('records the latest of each key, and an older seq arriving late never replaces a newer one', () => {
    const record = recorded([
      upload('company_doc', 1, 'a'),
      upload('company_doc', 2, 'a'),
      upload('selfie', 2),
    ]);
    expect(record['company_doc:a'].seq).toBe(2);
    expect(withUpload(record, upload('selfie', 1)).selfie.seq).toBe(2);
    expect(withUpload(record, upload('company_doc', 1))).toEqual(record);
  });
});
