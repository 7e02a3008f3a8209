import { missingUpload } from './step-requirements';

const level = {
  companyRequiredDocuments: ['certificate_of_incorporation', 'register_extract'],
  companyDocumentsMinRequired: null,
};
const doc = (documentType: string | null, active: boolean) => ({ slot: 'company_doc', documentType, active });

describe('missingUpload', () => {
  it('counts the newest company document of each type, even once a later upload superseded it', () => {
    // media-store keeps one active company_doc: the first document turned inactive when the second arrived.
    const both = [doc('register_extract', true), doc('certificate_of_incorporation', false)];
    expect(missingUpload('company_docs', level, both)).toBeUndefined();
    expect(missingUpload('company_documents', level, [doc('register_extract', true)])).toBe(
      'company_doc:certificate_of_incorporation',
    );
  });

  it('needs the back side of two-sided documents, whatever their case', () => {
    const front = { slot: 'document_front', documentType: 'ID_CARD', active: true };
    expect(missingUpload('identity_doc', level, [front])).toBe('document_back');
    expect(missingUpload('identity_doc', level, [{ ...front, documentType: 'passport' }])).toBeUndefined();
    expect(
      missingUpload('identity_doc', level, [front, { slot: 'document_back', active: true }]),
    ).toBeUndefined();
  });

  it('ignores superseded uploads of the other slots', () => {
    expect(missingUpload('selfie', level, [{ slot: 'selfie', active: false }])).toBe('selfie');
  });
});
