/** What the company-document rule reads of an upload (listForEnrollment is newest first). */
interface CompanyUpload {
  slot: string;
  documentType?: string | null;
  active: boolean;
}

/**
 * The company documents of an enrollment, for the hosted SDK's step submit and the worker's check alike.
 * media-store keeps one active upload per slot (decision 0112), so a second company_doc supersedes the first even
 * when it is another document: the newest upload of each documentType counts, active or not; an untyped upload
 * counts only while active. `uploads` must be newest first, active and superseded together.
 */
export function companyDocuments<T extends CompanyUpload>(uploads: T[]): T[] {
  const docs = uploads.filter((u) => u.slot === 'company_doc');
  const byType = new Map<string, T>();
  for (const doc of docs)
    if (doc.documentType && !byType.has(doc.documentType)) byType.set(doc.documentType, doc);
  return [...byType.values(), ...docs.filter((d) => !d.documentType && d.active)];
}
