import { signSdkToken } from '@tessera/auth';
import { type Credential, type Harness, INDIVIDUAL_LEVEL, startHarness } from './harness';

let h: Harness;
let key: Credential;
let productId: string;

beforeAll(async () => {
  h = await startHarness({ PUBLIC_BASE_URL: 'https://verify.example.test/' });
  ({ productId, key } = await h.tenant());
  await h.admin('post', `/products/${productId}/levels`, INDIVIDUAL_LEVEL);
  await h.admin('post', `/products/${productId}/levels`, {
    name: 'ENHANCED',
    applicantType: 'individual',
    steps: [{ kind: 'identity_doc' }, { kind: 'poa' }],
  });
  await h.admin('post', `/products/${productId}/levels`, {
    name: 'RETIRED',
    applicantType: 'individual',
    isActive: false,
    steps: [{ kind: 'identity_doc' }],
  });
  await h.admin('post', `/products/${productId}/levels`, {
    name: 'KYB',
    applicantType: 'company',
    steps: [{ kind: 'company_data' }],
  });
  await h.http().post('/v1/applicants').set(h.auth(key)).send({ externalUserId: 'u1' }).expect(201);
});
afterAll(() => h?.close());

const SESSION = {
  url: expect.stringMatching(/^https:\/\/verify\.example\.test\/sdk\/[A-Za-z0-9_-]{12}$/),
  shortCode: expect.stringMatching(/^[A-Za-z0-9_-]{12}$/),
  expiresAtUtc: expect.any(String),
  enrollmentId: expect.any(String),
};

const days = (iso: string) => (new Date(iso).getTime() - Date.now()) / 86_400_000;

describe('POST .../verification-sessions', () => {
  it('202 {url, shortCode, expiresAtUtc, enrollmentId, levelName}, link on PUBLIC_BASE_URL, 7-day default', async () => {
    const res = await h
      .http()
      .post('/v1/applicants/u1/verification-sessions?verificationLevelName=ENHANCED')
      .set(h.auth(key))
      .expect(202);
    expect(res.body).toEqual({ ...SESSION, levelName: 'ENHANCED' });
    expect(res.body.url.endsWith(`/sdk/${res.body.shortCode}`)).toBe(true);
    expect(days(res.body.expiresAtUtc)).toBeCloseTo(7, 1);
    // The applicant moves to the requested level.
    const applicant = await h.http().get('/v1/applicants/u1').set(h.auth(key)).expect(200);
    expect(applicant.body.verificationLevelName).toBe('ENHANCED');
  });

  it('stores valid presentation params and silently drops a URL that is not absolute http(s)', async () => {
    const query = new URLSearchParams({
      verificationLevelName: 'BASIC_KYC',
      lang: 'de',
      theme: 'dark',
      returnUrl: 'https://partner.test/done',
      successUrl: 'javascript:alert(1)',
      errorUrl: '/relative/path',
      ttlDays: '30',
    });
    const res = await h
      .http()
      .post(`/v1/applicants/u1/verification-sessions?${query}`)
      .set(h.auth(key))
      .expect(202);
    expect(days(res.body.expiresAtUtc)).toBeCloseTo(30, 1);
    const [row] = await h.sql<{ presentation: unknown }>(
      'SELECT presentation FROM enrollments WHERE id = $1',
      [res.body.enrollmentId],
    );
    expect(row.presentation).toEqual({ lang: 'de', theme: 'dark', returnUrl: 'https://partner.test/done' });
  });

  it('400 for ttlDays outside 1–90 and a missing level name; 404 for an unknown level; 422 inactive or wrong type', async () => {
    for (const ttl of ['0', '91', 'abc']) {
      const res = await h
        .http()
        .post(`/v1/applicants/u1/verification-sessions?verificationLevelName=BASIC_KYC&ttlDays=${ttl}`)
        .set(h.auth(key))
        .expect(400);
      expect(res.body).toEqual({ message: 'ttlDays: must be an integer from 1 to 90' });
    }
    const missing = await h
      .http()
      .post('/v1/applicants/u1/verification-sessions')
      .set(h.auth(key))
      .expect(400);
    expect(missing.body).toEqual({ message: 'verificationLevelName is required' });
    const unknown = await h
      .http()
      .post('/v1/applicants/u1/verification-sessions?verificationLevelName=NOPE')
      .set(h.auth(key))
      .expect(404);
    expect(unknown.body).toEqual({ message: 'Level not found' });
    const inactive = await h
      .http()
      .post('/v1/applicants/u1/verification-sessions?verificationLevelName=RETIRED')
      .set(h.auth(key))
      .expect(422);
    expect(inactive.body).toEqual({ message: 'Level RETIRED is inactive' });
    const wrongType = await h
      .http()
      .post('/v1/applicants/u1/verification-sessions?verificationLevelName=KYB')
      .set(h.auth(key))
      .expect(422);
    expect(wrongType.body).toEqual({ message: 'Level KYB is for company applicants' });
    const nobody = await h
      .http()
      .post('/v1/applicants/ghost/verification-sessions?verificationLevelName=BASIC_KYC')
      .set(h.auth(key))
      .expect(404);
    expect(nobody.body).toEqual({ message: 'Applicant not found' });
  });
});

describe('POST .../verifications', () => {
  it('mints a link for the applicant’s current level with the same presentation parser', async () => {
    await h.http().post('/v1/applicants').set(h.auth(key)).send({ externalUserId: 'u2' }).expect(201);
    const res = await h
      .http()
      .post('/v1/applicants/u2/verifications?theme=light&successUrl=http://partner.test/ok&returnUrl=ftp://x')
      .set(h.auth(key))
      .expect(202);
    expect(res.body).toEqual({ ...SESSION, levelName: 'BASIC_KYC' });
    const [row] = await h.sql<{ presentation: unknown }>(
      'SELECT presentation FROM enrollments WHERE id = $1',
      [res.body.enrollmentId],
    );
    expect(row.presentation).toEqual({ theme: 'light', successUrl: 'http://partner.test/ok' });
  });

  it('422 {message} when the applicant has no level or its level is inactive', async () => {
    await h
      .http()
      .post('/v1/applicants')
      .set(h.auth(key))
      .send({ externalUserId: 'co-x', type: 'company' })
      .expect(201);
    const none = await h.http().post('/v1/applicants/co-x/verifications').set(h.auth(key)).expect(422);
    expect(none.body).toEqual({ message: 'Applicant has no verification level' });
    await h.admin('post', `/products/${productId}/levels`, {
      name: 'SOON_OFF',
      applicantType: 'individual',
      steps: [{ kind: 'selfie' }],
    });
    await h
      .http()
      .post('/v1/applicants')
      .set(h.auth(key))
      .send({ externalUserId: 'u3', verificationLevelName: 'SOON_OFF' })
      .expect(201);
    await h.admin('patch', `/products/${productId}/levels/SOON_OFF`, { isActive: false });
    const inactive = await h.http().post('/v1/applicants/u3/verifications').set(h.auth(key)).expect(422);
    expect(inactive.body).toEqual({ message: 'Level SOON_OFF is inactive' });
  });

  it('records enrollment.created in the review history', async () => {
    const res = await h.http().get('/v1/applicants/u2/review-history').set(h.auth(key)).expect(200);
    expect(res.body.items.map((i: { eventType: string }) => i.eventType)).toEqual([
      'applicant.created',
      'enrollment.created',
    ]);
  });
});

describe('short code -> signed SDK token', () => {
  it('resolves a short code to a token that expires with the enrollment', async () => {
    const link = await h
      .http()
      .post('/v1/applicants/u1/verifications?ttlDays=1')
      .set(h.auth(key))
      .expect(202);
    const res = await h.http().get(`/api/v1/sdk/links/${link.body.shortCode}`).expect(200);
    expect(res.body).toEqual({
      token: expect.stringMatching(/^sdk1\./),
      expiresAtUtc: link.body.expiresAtUtc,
      enrollmentId: link.body.enrollmentId,
      levelName: link.body.levelName,
      presentation: {},
    });
    const claims = JSON.parse(Buffer.from(res.body.token.split('.')[1], 'base64url').toString());
    expect(claims).toMatchObject({ sub: link.body.enrollmentId, pid: productId });
    expect(claims.exp).toBe(Math.floor(new Date(link.body.expiresAtUtc).getTime() / 1000));
    // A token signed with another key does not carry the service's signature.
    expect(res.body.token).not.toBe(signSdkToken(claims, Buffer.alloc(32)));
  });

  it('404 for an unknown code, 410 once the link expired', async () => {
    const unknown = await h.http().get('/api/v1/sdk/links/AAAAAAAAAAAA').expect(404);
    expect(unknown.body).toEqual({ message: 'Link not found' });
    const link = await h.http().post('/v1/applicants/u1/verifications').set(h.auth(key)).expect(202);
    await h.sql("UPDATE enrollments SET expires_at = now() - interval '1 second' WHERE id = $1", [
      link.body.enrollmentId,
    ]);
    const expired = await h.http().get(`/api/v1/sdk/links/${link.body.shortCode}`).expect(410);
    expect(expired.body).toEqual({ message: 'Link expired' });
  });
});
