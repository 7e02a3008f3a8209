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

describe('externalUserId: what a path can address (decision 0476)', () => {
  it.each(['acme/eu', 'a?b', 'a#b', '100%', 'a b', 'é/ü', 'a+b;c'])(
    '%j is created and addressed percent-encoded in the path',
    async (id) => {
      await post('/v1/applicants', { externalUserId: id }).expect(201);
      const path = `/v1/applicants/${encodeURIComponent(id)}`;
      expect((await send('get', path).expect(200)).body.externalUserId).toBe(id);
      expect((await send('get', `${path}/status`).expect(200)).body.externalUserId).toBe(id);
    },
  );

  it('a company whose id holds a slash is addressed on its UBO routes too', async () => {
    await post('/v1/applicants', {
      externalUserId: 'acme/kyb',
      type: 'company',
      verificationLevelName: 'KYB_FULL',
    });
    const base = `/v1/applicants/${encodeURIComponent('acme/kyb')}`;
    await patch(`${base}/company-info`, { companyName: 'Acme' }).expect(200);
    await post(`${base}/ubos`, {
      fullName: 'A B',
      dateOfBirth: '1980-01-02',
      ownershipPercent: 50,
      roles: ['ubo'],
    }).expect(201);
    const spawned = await post(`${base}/ubos/0/spawn-kyc`, {}).expect(201);
    expect(spawned.body.childExternalUserId).toBe('acme/kyb-ubo-0');
    expect((await send('get', `${base}/company-structure`).expect(200)).body.counts.spawned).toBe(1);
  });

  it.each([
    ['.', 'externalUserId: must not be "." or "..", which URL paths cannot address'],
    ['..', 'externalUserId: must not be "." or "..", which URL paths cannot address'],
    ['a\nb', 'externalUserId: must not contain control characters'],
    ['a\u0007b', 'externalUserId: must not contain control characters'],
    ['a\u007fb', 'externalUserId: must not contain control characters'],
    ['a\u0085b', 'externalUserId: must not contain control characters'],
    [' \t ', 'externalUserId: is required'],
    ['x'.repeat(201), 'externalUserId: must be at most 200 characters'],
  ])('%j: 400 with a message naming the problem, nothing created', async (id, message) => {
    const res = await post('/v1/applicants', { externalUserId: id });
    expect([res.status, res.body]).toEqual([400, { message }]);
    const [row] = await h.sql<{ n: string }>(
      'SELECT count(*) AS n FROM applicants WHERE external_user_id = $1',
      [id.trim()],
    );
    expect(row.n).toBe('0');
  });

  it('a NUL is refused before the body is read, with 400 {message}', async () => {
    const res = await h
      .http()
      .post('/v1/applicants')
      .set(h.auth(key))
      .set('content-type', 'application/json')
      .send('{"externalUserId":"a\\u0000b"}');
    expect(res.status).toBe(400);
    expect(Object.keys(res.body)).toEqual(['message']);
  });
});

describe('company-structure allChildrenComplete: "every spawned child is terminal" (decision 0476)', () => {
  const structure = async (id: string) =>
    (await send('get', `/v1/applicants/${id}/company-structure`).expect(200)).body as {
      allChildrenComplete: boolean;
      counts: { total: number; spawned: number };
    };

  it('true with hasNoUbos and no rows: no spawned child is open', async () => {
    await post('/v1/applicants', {
      externalUserId: 'co-none',
      type: 'company',
      verificationLevelName: 'KYB_FULL',
    });
    await patch('/v1/applicants/co-none/company-structure', { hasNoUbos: true }).expect(200);
    expect(await structure('co-none')).toMatchObject({
      allChildrenComplete: true,
      counts: { total: 0, spawned: 0 },
    });
  });

  it('false while a spawned child is open; true again once its row is removed', async () => {
    await post('/v1/applicants', {
      externalUserId: 'co-open',
      type: 'company',
      verificationLevelName: 'KYB_FULL',
    });
    await post('/v1/applicants/co-open/ubos', {
      fullName: 'Open Owner',
      dateOfBirth: '1980-01-02',
      ownershipPercent: 60,
      roles: ['ubo'],
    }).expect(201);
    await post('/v1/applicants/co-open/ubos/0/spawn-kyc', {}).expect(201);
    expect((await structure('co-open')).allChildrenComplete).toBe(false);
    await send('get', '/v1/applicants/co-open').expect(200);
    await h.http().delete('/v1/applicants/co-open/ubos/0').set(h.auth(key)).expect(200);
    expect(await structure('co-open')).toMatchObject({ allChildrenComplete: true, counts: { spawned: 0 } });
  });
});

describe('KYB endpoints probe (decision 0476)', () => {
  it.each(['00', '000', '+0', '0.0'])(
    'uboIndex %j is not the canonical integer: 404 on every UBO route, nothing changed or spawned',
    async (index) => {
      const base = `/v1/applicants/co/ubos/${index}`;
      const notFound = [404, { message: 'UBO row not found' }];
      const got = await send('get', base);
      expect([got.status, got.body]).toEqual(notFound);
      const edited = await patch(base, { fullName: 'Changed Name' });
      expect([edited.status, edited.body]).toEqual(notFound);
      const spawned = await post(`${base}/spawn-kyc`, {});
      expect([spawned.status, spawned.body]).toEqual(notFound);
      const regenerated = await post(`${base}/regenerate-link`, {});
      expect([regenerated.status, regenerated.body]).toEqual(notFound);
      const row = await send('get', '/v1/applicants/co/ubos/0').expect(200);
      expect(row.body).toMatchObject({ fullName: 'Jane Doe', linkedApplicantId: null });
    },
  );
});

describe('request bodies are JSON (decision 0481)', () => {
  const NOT_JSON = [415, { message: 'Request bodies must be JSON: send Content-Type: application/json' }];
  const raw = (method: 'post' | 'patch', path: string, type: string, body: string) =>
    h.http()[method](path).set(h.auth(key)).set('content-type', type).send(body);

  it.each(['application/x-www-form-urlencoded', 'text/plain'])(
    'a %s body is 415 and not acted on: the row keeps its name, no child is spawned',
    async (type) => {
      const edited = await raw('patch', '/v1/applicants/co/ubos/0', type, 'fullName=Form%20Name');
      expect([edited.status, edited.body]).toEqual(NOT_JSON);
      const spawned = await raw('post', '/v1/applicants/co/ubos/0/spawn-kyc', type, 'ttlDays=3');
      expect([spawned.status, spawned.body]).toEqual(NOT_JSON);
      const created = await raw('post', '/v1/applicants', type, 'externalUserId=form-made');
      expect([created.status, created.body]).toEqual(NOT_JSON);
      const row = await send('get', '/v1/applicants/co/ubos/0').expect(200);
      expect(row.body).toMatchObject({ fullName: 'Jane Doe', linkedApplicantId: null });
      await send('get', '/v1/applicants/form-made').expect(404);
    },
  );

  it('a bodiless POST with a form Content-Type is taken as an empty body', async () => {
    const res = await h
      .http()
      .post('/v1/applicants/co/ubos/0/regenerate-link')
      .set(h.auth(key))
      .set('content-type', 'application/x-www-form-urlencoded');
    expect(res.status).not.toBe(415);
  });
});
