import { LogCapture } from '@tessera/testing';
import { type Credential, type Harness, INDIVIDUAL_LEVEL, startHarness } from './harness';

const logs = new LogCapture();
let h: Harness;
let key: Credential;
let productId: string;

beforeAll(async () => {
  h = await startHarness({ LOG_LEVEL: 'info' }, { logDestination: logs });
  ({ productId, key } = await h.tenant());
  await h.admin('post', `/products/${productId}/levels`, INDIVIDUAL_LEVEL);
});
afterAll(() => h?.close());

const MISSING = { message: 'X-Api-Key, X-Api-Secret and X-Environment headers are required' };
const INVALID = { message: 'Invalid credentials' };

describe('partner authentication', () => {
  it('accepts the three headers of an active key', async () => {
    await h.http().get('/v1/levels').set(h.auth(key)).expect(200);
  });

  it.each(['x-api-key', 'x-api-secret', 'x-environment'])(
    '401 {message} when %s is missing',
    async (name) => {
      const headers = { ...h.auth(key) };
      delete headers[name as keyof typeof headers];
      const res = await h.http().get('/v1/levels').set(headers).expect(401);
      expect(res.body).toEqual(MISSING);
    },
  );

  it('401 for a wrong secret, an unknown key and an X-Environment other than the key’s', async () => {
    const wrongSecret = await h
      .http()
      .get('/v1/levels')
      .set({ ...h.auth(key), 'x-api-secret': 'nope' })
      .expect(401);
    expect(wrongSecret.body).toEqual(INVALID);
    const unknown = await h
      .http()
      .get('/v1/levels')
      .set({ ...h.auth(key), 'x-api-key': 'vk_live_unknown' })
      .expect(401);
    expect(unknown.body).toEqual(INVALID);
    const env = await h
      .http()
      .get('/v1/levels')
      .set({ ...h.auth(key), 'x-environment': 'sandbox' })
      .expect(401);
    expect(env.body).toEqual(INVALID);
  });

  it('a sandbox key works only with X-Environment: sandbox', async () => {
    const sandbox = await h.admin<Credential>('post', `/products/${productId}/keys`, {
      environment: 'sandbox',
    });
    await h.http().get('/v1/levels').set(h.auth(sandbox)).expect(200);
    await h
      .http()
      .get('/v1/levels')
      .set({ ...h.auth(sandbox), 'x-environment': 'production' })
      .expect(401);
  });

  it('a deactivated key gets 401', async () => {
    const other = await h.admin<Credential>('post', `/products/${productId}/keys`, {
      environment: 'production',
    });
    await h.http().get('/v1/levels').set(h.auth(other)).expect(200);
    await h.admin('post', `/keys/${other.apiKey}/deactivate`);
    const res = await h.http().get('/v1/levels').set(h.auth(other)).expect(401);
    expect(res.body).toEqual(INVALID);
  });

  it('every partner route is guarded', async () => {
    const routes: [string, string][] = [
      ['get', '/v1/levels/BASIC_KYC'],
      ['post', '/v1/applicants'],
      ['get', '/v1/applicants/u1'],
      ['get', '/v1/applicants/u1/status'],
      ['get', '/v1/applicants/u1/steps'],
      ['get', '/v1/applicants/u1/review-history'],
      ['get', '/v1/applicants/u1/company-info'],
      ['patch', '/v1/applicants/u1/company-info'],
      ['get', '/v1/applicants/u1/company-structure'],
      ['post', '/v1/applicants/u1/verification-sessions'],
      ['post', '/v1/applicants/u1/verifications'],
    ];
    for (const [method, path] of routes) {
      const res = await (h.http() as unknown as Record<string, (p: string) => Promise<{ status: number }>>)[
        method
      ](path);
      expect([method, path, res.status]).toEqual([method, path, 401]);
    }
  });

  it('never writes the secret to a log line, even on failures', async () => {
    const secret = key.apiSecret;
    await h.http().post('/v1/applicants').set(h.auth(key)).send({ externalUserId: 'log-1' }).expect(201);
    await h.http().get('/v1/applicants/missing').set(h.auth(key)).expect(404);
    await h
      .http()
      .get('/v1/levels')
      .set({ ...h.auth(key), 'x-environment': 'sandbox' })
      .expect(401);
    await h.http().post('/v1/applicants').set(h.auth(key)).send({}).expect(400);
    expect(logs.lines.length).toBeGreaterThan(3);
    expect(logs.text).toContain('x-api-key');
    expect(logs.text).not.toContain(secret);
  });
});
