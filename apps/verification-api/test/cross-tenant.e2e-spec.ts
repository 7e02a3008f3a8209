import { COMPANY_LEVEL, type Credential, type Harness, INDIVIDUAL_LEVEL, startHarness } from './harness';

/**
 * Two products, A and B, each with an individual and a company applicant and their own levels.
 * Every partner endpoint called by B on A's resources answers 403 (applicants) or 404 (levels),
 * and nothing of A changes.
 */
let h: Harness;
let a: Credential;
let b: Credential;

beforeAll(async () => {
  h = await startHarness();
  const ta = await h.tenant('A');
  const tb = await h.tenant('B');
  a = ta.key;
  b = tb.key;
  await h.admin('post', `/products/${ta.productId}/levels`, { ...INDIVIDUAL_LEVEL, name: 'A_KYC' });
  await h.admin('post', `/products/${ta.productId}/levels`, { ...COMPANY_LEVEL, name: 'A_KYB' });
  await h.admin('post', `/products/${tb.productId}/levels`, { ...INDIVIDUAL_LEVEL, name: 'B_KYC' });
  await h
    .http()
    .post('/v1/applicants')
    .set(h.auth(a))
    .send({ externalUserId: 'a-ind', firstName: 'A' })
    .expect(201);
  await h
    .http()
    .post('/v1/applicants')
    .set(h.auth(a))
    .send({ externalUserId: 'a-co', type: 'company', verificationLevelName: 'A_KYB', companyName: 'A Ltd' })
    .expect(201);
});
afterAll(() => h?.close());

const FORBIDDEN = { message: 'Applicant belongs to another product' };
const NO_LEVEL = { message: 'Level not found' };

type Call = [
  method: 'get' | 'post' | 'patch',
  path: string,
  body: object | undefined,
  status: number,
  body: object,
];

const matrix: Call[] = [
  ['get', '/v1/levels/A_KYC', undefined, 404, NO_LEVEL],
  ['get', '/v1/levels/A_KYB', undefined, 404, NO_LEVEL],
  ['get', '/v1/applicants/a-ind', undefined, 403, FORBIDDEN],
  ['get', '/v1/applicants/a-co', undefined, 403, FORBIDDEN],
  ['get', '/v1/applicants/a-ind/status', undefined, 403, FORBIDDEN],
  ['get', '/v1/applicants/a-ind/steps', undefined, 403, FORBIDDEN],
  ['get', '/v1/applicants/a-ind/review-history', undefined, 403, FORBIDDEN],
  ['get', '/v1/applicants/a-co/company-info', undefined, 403, FORBIDDEN],
  ['patch', '/v1/applicants/a-co/company-info', { companyName: 'Stolen' }, 403, FORBIDDEN],
  ['get', '/v1/applicants/a-co/company-structure', undefined, 403, FORBIDDEN],
  [
    'post',
    '/v1/applicants/a-ind/verification-sessions?verificationLevelName=B_KYC',
    undefined,
    403,
    FORBIDDEN,
  ],
  ['post', '/v1/applicants/a-ind/verifications', undefined, 403, FORBIDDEN],
  ['post', '/v1/applicants', { externalUserId: 'b-1', verificationLevelName: 'A_KYC' }, 404, NO_LEVEL],
];

describe('cross-tenant matrix (product B calling on product A)', () => {
  it.each(matrix)('%s %s -> %s', async (method, path, body, status, expected) => {
    const res = await h.http()[method](path).set(h.auth(b)).send(body);
    expect(res.status).toBe(status);
    expect(res.body).toEqual(expected);
  });

  it('B’s level list holds only B’s levels', async () => {
    const res = await h.http().get('/v1/levels').set(h.auth(b)).expect(200);
    expect(res.body.items.map((l: { name: string }) => l.name)).toEqual(['B_KYC']);
  });

  it('A’s applicants are untouched and B may reuse the same externalUserId in its own product', async () => {
    const info = await h.http().get('/v1/applicants/a-co/company-info').set(h.auth(a)).expect(200);
    expect(info.body.companyName).toBe('A Ltd');
    expect(await h.sql('SELECT 1 FROM enrollments')).toHaveLength(0);
    const mine = await h
      .http()
      .post('/v1/applicants')
      .set(h.auth(b))
      .send({ externalUserId: 'a-ind' })
      .expect(201);
    const theirs = await h.http().get('/v1/applicants/a-ind').set(h.auth(a)).expect(200);
    expect(mine.body.id).not.toBe(theirs.body.id);
    // Each product now sees its own.
    const again = await h.http().get('/v1/applicants/a-ind').set(h.auth(b)).expect(200);
    expect(again.body.id).toBe(mine.body.id);
  });
});
