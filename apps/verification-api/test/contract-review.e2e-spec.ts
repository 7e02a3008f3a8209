import { COMPANY_LEVEL, type Credential, type Harness, INDIVIDUAL_LEVEL, startHarness } from './harness';

/**
 * Decision 0474: deviations from the verification contract found by the adversarial review, each pinned here.
 */
let h: Harness;
let productId: string;
let key: Credential;

const post = (path: string, body: unknown) =>
  h
    .http()
    .post(path)
    .set(h.auth(key))
    .send(body as object);

beforeAll(async () => {
  h = await startHarness();
  ({ productId, key } = await h.tenant());
  await h.admin('post', `/products/${productId}/levels`, INDIVIDUAL_LEVEL);
  await h.admin('post', `/products/${productId}/levels`, COMPANY_LEVEL);
  await post('/v1/applicants', {
    externalUserId: 'co',
    type: 'company',
    verificationLevelName: 'KYB_FULL',
  }).expect(201);
  for (const fullName of ['Jane Doe', 'John Roe']) {
    await post('/v1/applicants/co/ubos', {
      fullName,
      dateOfBirth: '1980-01-02',
      ownershipPercent: 40,
      roles: ['ubo'],
    }).expect(201);
  }
}, 60_000);
afterAll(() => h?.close());

describe('ttlDays in a spawn-kyc / regenerate-link body is a JSON integer (contract: "ttlDays (integer, days)")', () => {
  it.each([[true], [[5]], [{}], ['7'], [null]])(
    'spawn-kyc with ttlDays %j: 400 {message}, no child',
    async (ttlDays) => {
      const res = await post('/v1/applicants/co/ubos/1/spawn-kyc', { ttlDays });
      expect([res.status, res.body]).toEqual([400, { message: 'ttlDays: must be an integer from 1 to 90' }]);
      const [row] = await h.sql<{ n: string }>(
        `SELECT count(*) AS n FROM applicants WHERE external_user_id = 'co-ubo-1'`,
      );
      expect(row.n).toBe('0');
    },
  );

  it('regenerate-link with ttlDays true: 400 {message}', async () => {
    await post('/v1/applicants/co/ubos/0/spawn-kyc', {}).expect(201);
    const res = await post('/v1/applicants/co/ubos/0/regenerate-link', { ttlDays: true });
    expect([res.status, res.body]).toEqual([400, { message: 'ttlDays: must be an integer from 1 to 90' }]);
  });

  it('the bounds 1 and 90 are accepted and set the link expiry; no ttlDays is the 7-day default', async () => {
    const days = (res: { body: { sdkLink: { expiresAtUtc: string } } }) =>
      Math.round((Date.parse(res.body.sdkLink.expiresAtUtc) - Date.now()) / 86_400_000);
    expect(days(await post('/v1/applicants/co/ubos/0/regenerate-link', { ttlDays: 1 }).expect(200))).toBe(1);
    expect(days(await post('/v1/applicants/co/ubos/0/spawn-kyc', { ttlDays: 90 }).expect(200))).toBe(90);
    expect(days(await post('/v1/applicants/co/ubos/0/spawn-kyc', {}).expect(200))).toBe(7);
  });
});

describe('POST /v1/applicants is idempotent on externalUserId ("200 with the existing applicant, never a conflict")', () => {
  it('a repeat naming a level that no longer resolves, or one of the other type, answers 200 with the existing applicant', async () => {
    const first = await post('/v1/applicants', { externalUserId: 'u-repeat' }).expect(201);
    for (const verificationLevelName of ['GONE_LEVEL', 'KYB_FULL']) {
      const repeat = await post('/v1/applicants', { externalUserId: 'u-repeat', verificationLevelName });
      expect([repeat.status, repeat.body]).toEqual([200, first.body]);
    }
  });

  it('a new applicant naming an unknown level is still 404 and nothing is created', async () => {
    const res = await post('/v1/applicants', {
      externalUserId: 'u-new',
      verificationLevelName: 'GONE_LEVEL',
    });
    expect([res.status, res.body]).toEqual([404, { message: 'Level not found' }]);
    await h.http().get('/v1/applicants/u-new').set(h.auth(key)).expect(404);
  });
});

describe('externalUserId refusals name the real problem', () => {
  it.each([
    [{}, 'externalUserId: is required'],
    [{ externalUserId: '  ' }, 'externalUserId: is required'],
    [{ externalUserId: 123 }, 'externalUserId: must be a string'],
    [{ externalUserId: 'x'.repeat(201) }, 'externalUserId: must be at most 200 characters'],
  ])('%j: 400 %s', async (body, message) => {
    const res = await post('/v1/applicants', body);
    expect([res.status, res.body]).toEqual([400, { message }]);
  });

  it('200 characters is accepted', async () => {
    await post('/v1/applicants', { externalUserId: 'y'.repeat(200) }).expect(201);
  });
});
