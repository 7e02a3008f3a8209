import { COMPANY_LEVEL, type Credential, type Harness, INDIVIDUAL_LEVEL, startHarness } from './harness';

let h: Harness;
let key: Credential;
let otherKey: Credential;

beforeAll(async () => {
  h = await startHarness();
  const a = await h.tenant('A');
  key = a.key;
  await h.admin('post', `/products/${a.productId}/levels`, INDIVIDUAL_LEVEL);
  await h.admin('post', `/products/${a.productId}/levels`, COMPANY_LEVEL);
  await h.admin('post', `/products/${a.productId}/levels`, {
    name: 'OLD_KYC',
    applicantType: 'individual',
    isActive: false,
    steps: [{ kind: 'identity_doc' }],
  });
  const b = await h.tenant('B');
  otherKey = b.key;
  await h.admin('post', `/products/${b.productId}/levels`, { ...INDIVIDUAL_LEVEL, name: 'B_ONLY' });
});
afterAll(() => h?.close());

describe('GET /v1/levels', () => {
  it('lists the active levels of the caller’s product with summary fields only', async () => {
    const res = await h.http().get('/v1/levels').set(h.auth(key)).expect(200);
    expect(res.body).toEqual({
      items: [
        {
          name: 'BASIC_KYC',
          applicantType: 'individual',
          isActive: true,
          isDefault: true,
          requiredSteps: ['personal_information', 'identity_doc', 'selfie'],
        },
        {
          name: 'KYB_FULL',
          applicantType: 'company',
          isActive: true,
          isDefault: false,
          requiredSteps: ['company_data', 'company_documents'],
        },
      ],
      totalItems: 2,
    });
  });

  it('filters by type and includes inactive levels on request', async () => {
    const company = await h.http().get('/v1/levels?type=company').set(h.auth(key)).expect(200);
    expect(company.body.items.map((l: { name: string }) => l.name)).toEqual(['KYB_FULL']);
    const all = await h
      .http()
      .get('/v1/levels?type=individual&includeInactive=true')
      .set(h.auth(key))
      .expect(200);
    expect(all.body.items.map((l: { name: string }) => l.name)).toEqual(['BASIC_KYC', 'OLD_KYC']);
    expect(all.body.totalItems).toBe(2);
  });

  it('400 {message} for a bad filter', async () => {
    const res = await h.http().get('/v1/levels?type=robot').set(h.auth(key)).expect(400);
    expect(res.body).toEqual({ message: 'type: must be individual, company or all' });
    const inactive = await h.http().get('/v1/levels?includeInactive=yes').set(h.auth(key)).expect(400);
    expect(inactive.body).toEqual({ message: 'includeInactive: must be true or false' });
  });
});

describe('GET /v1/levels/{levelName}', () => {
  it('returns the detail with baseline defaults', async () => {
    const res = await h.http().get('/v1/levels/KYB_FULL').set(h.auth(key)).expect(200);
    expect(res.body).toEqual({
      id: expect.any(String),
      name: 'KYB_FULL',
      applicantType: 'company',
      isActive: true,
      isDefault: false,
      steps: [
        { kind: 'company_data', optional: false, config: {} },
        { kind: 'company_documents', optional: false, config: {} },
      ],
      attachedQuestionnaireId: null,
      personalInfoFields: [],
      personalInfoRequiredFields: [],
      companyDataFields: COMPANY_LEVEL.companyDataFields,
      companyRequiredFields: [],
      companyRequiredDocuments: [],
      companyDocumentsMinRequired: null,
      companyLegalForms: [],
    });
  });

  it('404 alike for a missing level and another tenant’s level', async () => {
    const missing = await h.http().get('/v1/levels/NOPE').set(h.auth(key)).expect(404);
    const foreign = await h.http().get('/v1/levels/B_ONLY').set(h.auth(key)).expect(404);
    expect(missing.body).toEqual({ message: 'Level not found' });
    expect(foreign.body).toEqual(missing.body);
    await h.http().get('/v1/levels/B_ONLY').set(h.auth(otherKey)).expect(200);
  });
});
