import { applicantWithToken, type Credential, type Harness, startHarness } from './harness';

/**
 * The multipart parser serves the whole app for the SDK's upload call. On any other route a multipart body is
 * refused with 415 before it is parsed, as form and text bodies are (decision 0481): it was read into no body at
 * all, so `POST /api/v1/sdk/personal-info` answered 200 and stored nothing.
 */
let h: Harness;
let key: Credential;
let token: string;

beforeAll(async () => {
  h = await startHarness();
  const t = await h.tenant();
  key = t.key;
  await h.admin('post', `/products/${t.productId}/levels`, {
    name: 'FLEVEL',
    applicantType: 'individual',
    steps: [{ kind: 'personal_information' }, { kind: 'selfie' }],
    personalInfoFields: ['firstName', 'lastName'],
  });
  ({ token } = await applicantWithToken(h, key, { externalUserId: 'mp', verificationLevelName: 'FLEVEL' }));
});
afterAll(() => h?.close());

const NOT_JSON = { message: 'Request bodies must be JSON: send Content-Type: application/json' };

it('a multipart body on an SDK JSON call is 415 and stores nothing', async () => {
  const res = await h
    .http()
    .post('/api/v1/sdk/personal-info')
    .set({ authorization: `Bearer ${token}` })
    .field('firstName', 'Zed');
  expect([res.status, res.body]).toEqual([415, NOT_JSON]);
  const [row] = await h.sql<{ first: string | null }>(
    `SELECT info->>'firstName' AS first FROM applicants WHERE external_user_id = 'mp'`,
  );
  expect(row.first).toBeNull();
});

it('a multipart body on a partner call is 415, and an unknown route stays 404', async () => {
  const partner = await h.http().post('/v1/applicants').set(h.auth(key)).field('externalUserId', 'form-made');
  expect([partner.status, partner.body]).toEqual([415, NOT_JSON]);
  await h.http().get('/v1/applicants/form-made').set(h.auth(key)).expect(404);
  await h.http().post('/api/v1/sdk/nowhere').field('a', 'b').expect(404);
});

it('the upload call still takes its multipart body', async () => {
  const res = await h
    .http()
    .post('/api/v1/sdk/uploads/SELFIE')
    .set({ authorization: `Bearer ${token}` })
    .attach('file', Buffer.from('not an image'), { filename: 'a.jpg', contentType: 'image/jpeg' });
  // Parsed and judged by the upload's own rules (the bytes are no image), not refused as a body type.
  expect(res.status).not.toBe(415);
  expect(res.status).toBeLessThan(500);
});
