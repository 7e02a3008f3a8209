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
    [{ externalUserId: 'alice ' }, 'externalUserId: must not start or end with whitespace'],
    [{ externalUserId: ' alice' }, 'externalUserId: must not start or end with whitespace'],
  ])('%j: 400 %s', async (body, message) => {
    const res = await post('/v1/applicants', body);
    expect([res.status, res.body]).toEqual([400, { message }]);
  });

  it('"alice " is never read as "alice": no other end user\'s applicant is answered', async () => {
    await post('/v1/applicants', { externalUserId: 'alice', firstName: 'Alice' }).expect(201);
    const other = await post('/v1/applicants', { externalUserId: 'alice ', firstName: 'Bob' });
    expect([other.status, other.body]).toEqual([
      400,
      { message: 'externalUserId: must not start or end with whitespace' },
    ]);
    const inner = await post('/v1/applicants', { externalUserId: 'a l i c e' }).expect(201);
    expect(inner.body.externalUserId).toBe('a l i c e');
  });

  it('200 characters is accepted', async () => {
    await post('/v1/applicants', { externalUserId: 'y'.repeat(200) }).expect(201);
  });
});

describe("ttlDays in a session query is the text of an integer from 1 to 90 (as review-history's limit)", () => {
  it.each(['1e1', '0x10', '%205', '+5', '0b11'])('ttlDays=%s: 400 {message}, no link', async (ttl) => {
    await post('/v1/applicants', { externalUserId: `ttl-${ttl}` }).expect(201);
    const id = encodeURIComponent(`ttl-${ttl}`);
    for (const path of [
      `/v1/applicants/${id}/verification-sessions?verificationLevelName=BASIC_KYC&ttlDays=${ttl}`,
      `/v1/applicants/${id}/verifications?ttlDays=${ttl}`,
    ]) {
      const res = await h.http().post(path).set(h.auth(key));
      expect([res.status, res.body]).toEqual([400, { message: 'ttlDays: must be an integer from 1 to 90' }]);
    }
    const [links] = await h.sql<{ n: string }>(
      `SELECT count(*) AS n FROM enrollments e JOIN applicants a ON a.id = e.applicant_id
        WHERE a.external_user_id = $1`,
      [`ttl-${ttl}`],
    );
    expect(links.n).toBe('0');
  });

  it('ttlDays=10 is a ten-day link', async () => {
    await post('/v1/applicants', { externalUserId: 'ttl-ten' }).expect(201);
    const res = await h.http().post('/v1/applicants/ttl-ten/verifications?ttlDays=10').set(h.auth(key));
    expect(res.status).toBe(202);
    const days = (Date.parse(res.body.expiresAtUtc) - Date.now()) / 86_400_000;
    expect(days).toBeGreaterThan(9.9);
    expect(days).toBeLessThanOrEqual(10);
  });
});

describe('email is one address wherever the partner claims it (as on UBO rows and the hosted page)', () => {
  it.each([
    ['create', () => post('/v1/applicants', { externalUserId: 'mail-bad', email: 'not-an-email' })],
    [
      'PATCH personal-info',
      () => h.http().patch('/v1/applicants/mail-ok/personal-info').set(h.auth(key)).send({ email: 'a@b' }),
    ],
    [
      'PATCH company-info',
      () =>
        h.http().patch('/v1/applicants/co/company-info').set(h.auth(key)).send({ email: 'co at example' }),
    ],
  ])('%s with a malformed email: 400 {message}, nothing stored', async (_, send) => {
    await post('/v1/applicants', { externalUserId: 'mail-ok', email: ' jane@example.com ' }).expect((r) =>
      expect([200, 201]).toContain(r.status),
    );
    const res = await send();
    expect([res.status, res.body]).toEqual([400, { message: 'email: must be an email address' }]);
    const rows = await h.sql<{ external_user_id: string; email: string | null }>(
      `SELECT external_user_id, info->>'email' AS email FROM applicants
        WHERE external_user_id IN ('mail-bad', 'mail-ok', 'co') ORDER BY external_user_id`,
    );
    expect(rows).toEqual([
      { external_user_id: 'co', email: null },
      { external_user_id: 'mail-ok', email: 'jane@example.com' },
    ]);
  });
});
