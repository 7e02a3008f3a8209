import { applicantWithToken, type Credential, type Harness, startHarness } from './harness';

/**
 * A link resolves only to a token the SDK calls accept: `GET /api/v1/sdk/links/{shortCode}` judges the session by
 * the SDK guard's own rule (`refusal`), so a link the guard would refuse is 410, not a token that every call then
 * refuses with 401 and a page that sends its user to `errorUrl` instead of "This link has expired".
 */
let h: Harness;
let key: Credential;
let productId: string;

const LEVEL = {
  name: 'FORMS',
  applicantType: 'individual',
  steps: [{ kind: 'personal_information' }],
  personalInfoFields: ['firstName', 'lastName'],
  personalInfoRequiredFields: ['firstName', 'lastName'],
};

beforeAll(async () => {
  h = await startHarness();
  ({ productId, key } = await h.tenant());
  await h.admin('post', `/products/${productId}/levels`, LEVEL);
  await h.admin('post', `/products/${productId}/levels`, { ...LEVEL, name: 'OTHER' });
});
afterAll(() => h?.close());

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const mint = async (id: string, level: string) =>
  (
    await h
      .http()
      .post(`/v1/applicants/${id}/verification-sessions?verificationLevelName=${level}`)
      .set(h.auth(key))
      .expect(202)
  ).body.shortCode as string;
const resolve = (code: string) => h.http().get(`/api/v1/sdk/links/${code}`);

/** An applicant on FORMS whose link was filled in and submitted: its short code and token. */
async function submitted(externalUserId: string): Promise<{ shortCode: string; token: string }> {
  const link = await applicantWithToken(h, key, { externalUserId, verificationLevelName: 'FORMS' });
  const sdk = (path: string) => h.http().post(`/api/v1/sdk/${path}`).set(bearer(link.token));
  await sdk('personal-info').send({ firstName: 'A', lastName: 'B' }).expect(200);
  await sdk('steps/personal_information/submit').expect(200);
  await sdk('submit').expect(202);
  return link;
}

it('a submitted link whose applicant then moved to another level: 410 replaced, as the guard sees it', async () => {
  const { shortCode: code, token } = await submitted('mv');
  // Submitted, so the new link does not replace its enrollment; the applicant's level moves on.
  const fresh = await mint('mv', 'OTHER');
  await h.http().get('/api/v1/sdk/session').set(bearer(token)).expect(401);
  const old = await resolve(code);
  expect([old.status, old.body]).toEqual([410, { message: 'Link replaced by a newer one' }]);
  await resolve(fresh).expect(200);
});

it("a deactivated applicant's submitted link (deactivation closes only open ones): 410 closed", async () => {
  const { shortCode: code, token } = await submitted('off');
  await h.admin('post', `/products/${productId}/applicants/off/deactivate`, {});
  await h.http().get('/api/v1/sdk/session').set(bearer(token)).expect(401);
  const closed = await resolve(code);
  expect([closed.status, closed.body]).toEqual([410, { message: 'Link closed' }]);
});
