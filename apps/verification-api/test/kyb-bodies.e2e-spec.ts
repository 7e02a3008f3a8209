import { COMPANY_LEVEL, type Credential, type Harness, startHarness } from './harness';

/**
 * Decision 0483: the KYB bodies refuse what they cannot keep as sent. Unknown keys on company-structure as on
 * company-info; an ownershipPercent finer than the stored 2 decimals; wrong JSON types worded `<field>: must be
 * a string`, nested paths as `steps[0].kind`. Every refusal leaves the stored row as it was.
 */
let h: Harness;
let productId: string;
let key: Credential;

const send = (method: 'post' | 'patch', path: string, body: unknown) => {
  const agent = h.http();
  return agent[method](path)
    .set(h.auth(key))
    .send(body as object);
};
const refused = async (method: 'post' | 'patch', path: string, body: unknown) => {
  const res = await send(method, path, body);
  return [res.status, res.body];
};
const structure = async () =>
  (await h.http().get('/v1/applicants/co/company-structure').set(h.auth(key)).expect(200)).body;
const row = async (index: number) =>
  (await h.http().get(`/v1/applicants/co/ubos/${index}`).set(h.auth(key)).expect(200)).body;

const JANE = { fullName: 'Jane Doe', dateOfBirth: '1980-01-02', ownershipPercent: 40, roles: ['ubo'] };

beforeAll(async () => {
  h = await startHarness();
  ({ productId, key } = await h.tenant());
  await h.admin('post', `/products/${productId}/levels`, COMPANY_LEVEL);
  await send('post', '/v1/applicants', {
    externalUserId: 'co',
    type: 'company',
    verificationLevelName: 'KYB_FULL',
    companyName: 'Acme',
  }).expect(201);
  await send('post', '/v1/applicants/co/ubos', JANE).expect(201);
}, 60_000);
afterAll(() => h?.close());

describe('PATCH company-structure refuses unknown keys as company-info does', () => {
  it('a misspelt flag is 400 naming it, and no flag changes', async () => {
    const before = await structure();
    expect(await refused('patch', '/v1/applicants/co/company-structure', { hasNoUbo: true })).toEqual([
      400,
      { message: 'Unrecognized key: "hasNoUbo"' },
    ]);
    expect(
      await refused('patch', '/v1/applicants/co/company-structure', { hasNoDirectors: true, extra: 1 }),
    ).toEqual([400, { message: 'Unrecognized key: "extra"' }]);
    expect(await structure()).toEqual(before);
    // The same shape as company-info's refusal of an unknown key.
    expect(await refused('patch', '/v1/applicants/co/company-info', { nickname: 'A' })).toEqual([
      400,
      { message: 'Unrecognized key: "nickname"' },
    ]);
    await send('patch', '/v1/applicants/co/company-structure', { hasNoDirectors: true }).expect(200);
    expect((await structure()).hasNoDirectors).toBe(true);
  });
});

describe('ownershipPercent is kept exactly as sent, or refused', () => {
  it.each([1e-9, 33.333, 0.125, 99.999])(
    '%p (more than 2 decimals) is 400 on POST and PATCH, nothing stored',
    async (value) => {
      const message = { message: 'ownershipPercent: must have at most 2 decimal places' };
      expect(await refused('post', '/v1/applicants/co/ubos', { ...JANE, ownershipPercent: value })).toEqual([
        400,
        message,
      ]);
      expect(await refused('patch', '/v1/applicants/co/ubos/0', { ownershipPercent: value })).toEqual([
        400,
        message,
      ]);
      expect((await row(0)).ownershipPercent).toBe(40);
      const rows = await h.sql<{ n: string }>('SELECT count(*) AS n FROM ubos');
      expect(rows[0].n).toBe('1');
    },
  );

  it.each([-0.01, 100.01, 101])('%p is outside 0 to 100: 400', async (value) => {
    expect(await refused('patch', '/v1/applicants/co/ubos/0', { ownershipPercent: value })).toEqual([
      400,
      { message: 'ownershipPercent: must be from 0 to 100' },
    ]);
  });

  it.each([0, 0.1, 12.5, 33.33, 60])('%p reads back exactly', async (value) => {
    await send('patch', '/v1/applicants/co/ubos/0', { ownershipPercent: value }).expect(200);
    expect((await row(0)).ownershipPercent).toBe(value);
  });
});

describe('a wrong JSON type is named in the house form, never in zod default wording', () => {
  it.each([
    ['patch', '/v1/applicants/co/ubos/0', { fullName: 5 }, 'fullName: must be a string'],
    ['patch', '/v1/applicants/co/ubos/0', { dateOfBirth: 19800102 }, 'dateOfBirth: must be a string'],
    ['patch', '/v1/applicants/co/ubos/0', { ownershipPercent: '10' }, 'ownershipPercent: must be a number'],
    ['patch', '/v1/applicants/co/ubos/0', { roles: 'ubo' }, 'roles: must be an array'],
    ['patch', '/v1/applicants/co/ubos/0', { email: 7 }, 'email: must be a string'],
    ['patch', '/v1/applicants/co/ubos/0', { email: 'nope' }, 'email: must be an email address'],
    ['post', '/v1/applicants/co/ubos', { ...JANE, fullName: ['Jane'] }, 'fullName: must be a string'],
    [
      'post',
      '/v1/applicants/co/ubos',
      { ...JANE, ownershipPercent: undefined },
      'ownershipPercent: is required',
    ],
    ['patch', '/v1/applicants/co/company-info', { companyName: 42 }, 'companyName: must be a string'],
    ['patch', '/v1/applicants/co/company-info', { phone: { n: 1 } }, 'phone: must be a string'],
    ['patch', '/v1/applicants/co/company-info', { companyName: '' }, 'companyName: must not be empty'],
    [
      'patch',
      '/v1/applicants/co/company-structure',
      { hasNoUbos: 'yes' },
      'hasNoUbos: must be true or false',
    ],
    ['post', '/v1/applicants/co/ubos/0/spawn-kyc', { levelName: 5 }, 'levelName: must be a string'],
    [
      'post',
      '/v1/applicants',
      { externalUserId: 'x', type: 'person' },
      'type: must be one of individual, company',
    ],
  ] as const)('%s %s %j: 400 %j', async (method, path, body, message) => {
    expect(await refused(method, path, body)).toEqual([400, { message }]);
  });

  it('a nested field is named by its path as a client writes it', async () => {
    const level = {
      name: 'NESTED',
      applicantType: 'company',
      steps: [{ kind: 'company_data' }, { kind: 5 }],
    };
    await expect(h.admin('post', `/products/${productId}/levels`, level)).rejects.toThrow(
      /400 \{"message":"steps\[1\]\.kind: must be one of identity_doc, selfie, liveness, /,
    );
  });

  it('the row is unchanged after the refusals', async () => {
    expect(await row(0)).toMatchObject({ fullName: 'Jane Doe', dateOfBirth: '1980-01-02', roles: ['ubo'] });
  });
});
