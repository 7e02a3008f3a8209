import { COMPANY_LEVEL, type Credential, type Harness, INDIVIDUAL_LEVEL, startHarness } from './harness';

/**
 * Decision 0476: country codes, externalUserId characters, company-structure `allChildrenComplete` and the
 * adversarial probe of the KYB endpoints, each deviation pinned here.
 */
let h: Harness;
let productId: string;
let key: Credential;

const send = (method: 'post' | 'patch' | 'get', path: string, body?: unknown) => {
  const req = h.http()[method](path).set(h.auth(key));
  return body === undefined ? req : req.send(body as object);
};
const post = (path: string, body: unknown) => send('post', path, body);
const patch = (path: string, body: unknown) => send('patch', path, body);

/** A level whose personal-info step does not enable `country` or `nationality`. */
const NAMES_ONLY = {
  name: 'NAMES_ONLY',
  applicantType: 'individual',
  steps: [{ kind: 'personal_information' }],
  personalInfoFields: ['firstName', 'lastName'],
};

beforeAll(async () => {
  h = await startHarness();
  ({ productId, key } = await h.tenant());
  await h.admin('post', `/products/${productId}/levels`, INDIVIDUAL_LEVEL);
  await h.admin('post', `/products/${productId}/levels`, COMPANY_LEVEL);
  await h.admin('post', `/products/${productId}/levels`, NAMES_ONLY);
  await post('/v1/applicants', {
    externalUserId: 'co',
    type: 'company',
    verificationLevelName: 'KYB_FULL',
  }).expect(201);
  await post('/v1/applicants/co/ubos', {
    fullName: 'Jane Doe',
    dateOfBirth: '1980-01-02',
    ownershipPercent: 40,
    roles: ['ubo'],
  }).expect(201);
}, 60_000);
afterAll(() => h?.close());

const COUNTRY_MESSAGE = 'must be an ISO 3166-1 alpha-2 or alpha-3 country code';
const BAD_COUNTRIES = ['ZZ', 'a1', 'XYZ', '!!', '276', 'DEUT'];

describe('country codes are ISO 3166-1 alpha-2 or alpha-3 on every path (decision 0476)', () => {
  it.each(BAD_COUNTRIES)(
    'POST /v1/applicants with country or nationality %j: 400 naming the field',
    async (code) => {
      for (const [field, extra] of [
        ['country', { type: 'company', verificationLevelName: 'KYB_FULL' }],
        ['nationality', {}],
        ['country', {}],
      ] as const) {
        const res = await post('/v1/applicants', {
          externalUserId: `bad-${field}-${code}`,
          ...extra,
          [field]: code,
        });
        expect([res.status, res.body]).toEqual([400, { message: `${field}: ${COUNTRY_MESSAGE}` }]);
      }
      const [row] = await h.sql<{ n: string }>(
        `SELECT count(*) AS n FROM applicants WHERE external_user_id LIKE 'bad-%'`,
      );
      expect(row.n).toBe('0');
    },
  );

  it('a bad code is 400 even when the level does not enable the field; a good one is then dropped', async () => {
    const bad = await post('/v1/applicants', {
      externalUserId: 'names-1',
      verificationLevelName: 'NAMES_ONLY',
      nationality: 'ZZ',
    });
    expect([bad.status, bad.body]).toEqual([400, { message: `nationality: ${COUNTRY_MESSAGE}` }]);
    const ok = await post('/v1/applicants', {
      externalUserId: 'names-1',
      verificationLevelName: 'NAMES_ONLY',
      firstName: 'Ada',
      nationality: 'GB',
    }).expect(201);
    expect(ok.body.info).toEqual({ firstName: 'Ada' });
  });

  it('alpha-2 and alpha-3 in any case are accepted and stored upper case as given', async () => {
    const co = await post('/v1/applicants', {
      externalUserId: 'co-cc',
      type: 'company',
      verificationLevelName: 'KYB_FULL',
      country: ' deu ',
    }).expect(201);
    expect(co.body.info).toMatchObject({ country: 'DEU' });
    const person = await post('/v1/applicants', { externalUserId: 'p-cc', nationality: 'Gbr' }).expect(201);
    expect(person.body.info).toMatchObject({ nationality: 'GBR' });
  });

  it('PATCH company-info and personal-info: a bad country is 400, a good one is stored upper case', async () => {
    for (const code of BAD_COUNTRIES) {
      const res = await patch('/v1/applicants/co/company-info', { country: code });
      expect([res.status, res.body]).toEqual([400, { message: `country: ${COUNTRY_MESSAGE}` }]);
    }
    const ok = await patch('/v1/applicants/co/company-info', { country: 'ch' }).expect(200);
    expect(ok.body).toMatchObject({ country: 'CH' });
    const bad = await patch('/v1/applicants/p-cc/personal-info', { nationality: 'XX' });
    expect([bad.status, bad.body]).toEqual([400, { message: `nationality: ${COUNTRY_MESSAGE}` }]);
  });

  it('UBO rows: a bad nationality is 400 on create and edit; lower case is accepted and upper-cased', async () => {
    const row = { fullName: 'Max Roe', dateOfBirth: '1970-03-04', ownershipPercent: 30, roles: ['ubo'] };
    for (const nationality of BAD_COUNTRIES) {
      const created = await post('/v1/applicants/co/ubos', { ...row, nationality });
      expect([created.status, created.body]).toEqual([400, { message: `nationality: ${COUNTRY_MESSAGE}` }]);
      const edited = await patch('/v1/applicants/co/ubos/0', { nationality });
      expect([edited.status, edited.body]).toEqual([400, { message: `nationality: ${COUNTRY_MESSAGE}` }]);
    }
    expect((await patch('/v1/applicants/co/ubos/0', { nationality: 'fr' }).expect(200)).body).toMatchObject({
      nationality: 'FR',
    });
  });

  it('a value stored before the rule stays readable', async () => {
    await h.sql(
      `UPDATE applicants SET info = info || '{"registrationCountry": "zz"}' WHERE external_user_id = 'co'`,
    );
    const info = await send('get', '/v1/applicants/co/company-info').expect(200);
    expect(info.body.country).toBe('zz');
  });

  it('the hosted SDK refuses a code outside ISO 3166-1 and upper-cases a good one', async () => {
    await post('/v1/applicants', { externalUserId: 'sdk-cc' }).expect(201);
    const link = await post(
      '/v1/applicants/sdk-cc/verification-sessions?verificationLevelName=BASIC_KYC',
      {},
    ).expect(202);
    const resolved = await h.http().get(`/api/v1/sdk/links/${link.body.shortCode}`).expect(200);
    const sdk = (body: object) =>
      h
        .http()
        .post('/api/v1/sdk/personal-info')
        .set({ authorization: `Bearer ${resolved.body.token}` })
        .send(body);
    const bad = await sdk({ nationality: 'ZZ' });
    expect([bad.status, bad.body]).toEqual([400, { message: `nationality: ${COUNTRY_MESSAGE}` }]);
    expect((await sdk({ nationality: 'esp' }).expect(200)).body.values).toMatchObject({ nationality: 'ESP' });
  });
});
