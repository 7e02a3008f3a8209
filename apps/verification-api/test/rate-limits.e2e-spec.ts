import { TEST_ADMIN_TOKEN } from '@tessera/testing';
import { type Credential, type Harness, startHarness } from './harness';
import { loadEnv } from '../src/config/env';

let h: Harness;
let key: Credential;
let other: Credential;

beforeAll(async () => {
  h = await startHarness({ RATE_LIMIT_PER_CREDENTIAL_PER_MINUTE: '5' });
  ({ key } = await h.tenant('A'));
  ({ key: other } = await h.tenant('B'));
});
afterAll(() => h?.close());

describe('per-credential limit', () => {
  it('answers 429 {message} with Retry-After past the limit; other credentials are unaffected', async () => {
    for (let i = 0; i < 5; i++) await h.http().get('/v1/levels').set(h.auth(key)).expect(200);
    const refused = await h.http().get('/v1/levels').set(h.auth(key)).expect(429);
    expect(refused.body).toEqual({ message: 'Too many requests' });
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(Number(refused.headers['retry-after'])).toBeLessThanOrEqual(60);
    await h.http().get('/v1/levels').set(h.auth(other)).expect(200);
  });

  it('requests of one credential arriving together are counted exactly: 12 at once against 5 admit 5', async () => {
    const { key: burst } = await h.tenant('C');
    const responses = await Promise.all(
      Array.from({ length: 12 }, () =>
        h
          .http()
          .get('/v1/levels')
          .set(h.auth(burst))
          .then((r) => r),
      ),
    );
    expect(responses.filter((r) => r.status === 200)).toHaveLength(5);
    const refused = responses.filter((r) => r.status === 429);
    expect(refused).toHaveLength(7);
    for (const r of refused) expect(Number(r.headers['retry-after'])).toBeGreaterThanOrEqual(1);
  });
});

describe('per-credential limit with permits taken ahead (decision 0428)', () => {
  let busy: Harness;
  afterAll(() => busy?.close());

  it('a busy credential still gets exactly its limit: 10 streams of requests against 300 admit 300', async () => {
    // 300 a minute lets a replica hold 3 permits ahead: the streams are served from them between round trips.
    busy = await startHarness({ RATE_LIMIT_PER_CREDENTIAL_PER_MINUTE: '300' });
    const { key: streams } = await busy.tenant('D');
    const statuses: number[] = [];
    await Promise.all(
      Array.from({ length: 10 }, async () => {
        for (let i = 0; i < 34; i++)
          statuses.push((await busy.http().get('/v1/levels').set(busy.auth(streams))).status);
      }),
    );
    expect(statuses.filter((s) => s === 200)).toHaveLength(300);
    expect(statuses.filter((s) => s === 429)).toHaveLength(40);
  });
});

describe('auth endpoints: 20 failed authentications per minute per IP and per API', () => {
  it('the partner API and the operator API count apart; the 21st failure of each answers 429 (issue 15)', async () => {
    for (let i = 0; i < 20; i++) {
      await h
        .http()
        .get('/v1/levels')
        .set({ ...h.auth(other), 'x-api-secret': `wrong-${i}` })
        .expect(401);
    }
    const partner = await h.http().get('/v1/levels').set({ 'x-api-key': 'vk_live_x' }).expect(429);
    expect(partner.body).toEqual({ message: 'Too many requests' });
    expect(Number(partner.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    // Twenty partner failures left the operator's bucket untouched: a wrong token is still a 401.
    for (let i = 0; i < 20; i++) {
      await h
        .http()
        .post('/admin/v1/products')
        .set({ authorization: 'Bearer wrong-token-0000000' })
        .expect(401);
    }
    const operator = await h
      .http()
      .post('/admin/v1/products')
      .set({ authorization: 'Bearer wrong-token-0000000' })
      .expect(429);
    expect(operator.body).toEqual({ message: 'Too many requests' });
    expect(operator.headers['retry-after']).toBeDefined();
  });

  it('a valid credential or operator token from that IP still gets through', async () => {
    await h.http().get('/v1/levels').set(h.auth(other)).expect(200);
    await h
      .http()
      .post('/admin/v1/products')
      .set({ authorization: `Bearer ${TEST_ADMIN_TOKEN}` })
      .send({ name: 'C' })
      .expect(201);
  });
});

describe('per-IP SDK limit behind a proxy: TRUSTED_PROXIES', () => {
  const LIMITED = { SDK_RATE_LIMIT_PER_IP_PER_MINUTE: '2' };
  /** A link resolve (counted against the client IP before the unknown code answers 404) from `forwardedFor`. */
  const resolve = (app: Harness, forwardedFor: string) =>
    app.http().get('/api/v1/sdk/links/UNKNOWNCODE1').set('x-forwarded-for', forwardedFor);

  it('with the peer trusted, X-Forwarded-For tells clients apart (its right-most untrusted hop; a prepended one is ignored)', async () => {
    const behind = await startHarness({ ...LIMITED, TRUSTED_PROXIES: '127.0.0.1, 10.0.0.0/8' });
    try {
      await resolve(behind, '203.0.113.1').expect(404);
      await resolve(behind, '203.0.113.1, 10.1.2.3').expect(404);
      const limited = await resolve(behind, '203.0.113.1').expect(429);
      expect(limited.body).toEqual({ message: 'Too many requests' });
      // A client that prepends an address of its own is still counted as the address the proxy saw.
      await resolve(behind, '198.51.100.9, 203.0.113.1').expect(429);
      // Another client behind the same proxy has a bucket of its own.
      await resolve(behind, '203.0.113.2').expect(404);
      await resolve(behind, '203.0.113.2').expect(404);
      await resolve(behind, '203.0.113.2').expect(429);
    } finally {
      await behind.close();
    }
  });

  it('without TRUSTED_PROXIES, X-Forwarded-For is ignored: every request counts against the peer', async () => {
    const direct = await startHarness(LIMITED);
    try {
      await resolve(direct, '203.0.113.1').expect(404);
      await resolve(direct, '203.0.113.2').expect(404);
      await resolve(direct, '203.0.113.3').expect(429);
    } finally {
      await direct.close();
    }
  });

  it('a TRUSTED_PROXIES entry that is not an address or CIDR stops the boot', () => {
    expect(() => loadEnv({ ...h.env.env, TRUSTED_PROXIES: '10.0.0.0/8,ingress' })).toThrow(
      /TRUSTED_PROXIES.*ingress is not an IP address or CIDR/s,
    );
  });
});
