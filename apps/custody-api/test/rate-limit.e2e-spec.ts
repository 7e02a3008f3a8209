import { TEST_ADMIN_TOKEN } from '@tessera/testing';
import request from 'supertest';
import { client, createKey, createTenant, type Harness, startHarness } from './support';

let h: Harness;
let busy: Harness | undefined;
beforeAll(async () => {
  h = await startHarness(
    { CUSTODY_RATE_LIMIT_PER_KEY: '3', CUSTODY_RATE_LIMIT_PER_IP: '2', CUSTODY_AUTH_FAILURES_PER_IP: '4' },
    { worker: false },
  );
});
afterAll(async () => {
  await h?.close();
  await busy?.close();
});

describe('rate limits (sliding window, 4 segments of 15 s)', () => {
  it('per API key: immediate 429 with an empty body and an integer Retry-After; other keys unaffected', async () => {
    const tenant = await createTenant(h.api);
    const a = client(h.api, await createKey(h.api, tenant));
    const b = client(h.api, await createKey(h.api, tenant));
    for (let i = 0; i < 3; i++) await a.get('/assets').expect(200);
    const limited = await a.post('/transactions/withdraw', {}).expect(429);
    expect(limited.text).toBe('');
    expect(limited.headers['retry-after']).toMatch(/^\d+$/);
    expect(Number(limited.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(Number(limited.headers['retry-after'])).toBeLessThanOrEqual(60);
    await b.get('/assets').expect(200);
  });

  it('per client IP on /health and /swagger (shared bucket for the address)', async () => {
    const http = () => request(h.api.getHttpServer());
    await http().get('/health').expect(200);
    await http().get('/swagger/json').expect(200);
    const limited = await http().get('/health').expect(429);
    expect(limited.text).toBe('');
    expect(limited.headers['retry-after']).toMatch(/^\d+$/);
  });

  it('failed authentications: one bucket for the signed API, another for the operator API (issue 15)', async () => {
    const http = () => request(h.api.getHttpServer());
    // Four bad signatures from the address exhaust the signed API's bucket: the fifth is a 429.
    const forged = (i: number) => ({
      'x-api-key': `ck_test_${'0'.repeat(31)}${i}`,
      'x-timestamp': String(Date.now()),
      'x-signature': '0'.repeat(64),
    });
    for (let i = 0; i < 4; i++) await http().get('/vaults').set(forged(i)).expect(401);
    const signed = await http().get('/vaults').set(forged(9)).expect(429);
    expect(signed.headers['retry-after']).toMatch(/^\d+$/);
    // The operator API's bucket is untouched: wrong tokens are 401 four times, then 429; the right one passes.
    for (let i = 0; i < 4; i++) {
      await http()
        .get('/admin/tenants/x/assets')
        .set('authorization', 'Bearer wrong-wrong-wrong')
        .expect(401);
    }
    await http().post('/admin/tenants').set('authorization', 'Bearer wrong-wrong-wrong').send({}).expect(429);
    await http()
      .post('/admin/tenants')
      .set('authorization', `Bearer ${TEST_ADMIN_TOKEN}`)
      .send({ name: 'still-open' })
      .expect(201);
  });

  it('a busy key still gets exactly its limit: 10 streams of requests against 300 admit 300 (decision 0429)', async () => {
    // 300 a minute lets a replica hold 3 permits ahead: the streams are served from them between round trips.
    busy = await startHarness({ CUSTODY_RATE_LIMIT_PER_KEY: '300' }, { worker: false });
    const tenant = await createTenant(busy.api);
    const streams = client(busy.api, await createKey(busy.api, tenant));
    const statuses: number[] = [];
    await Promise.all(
      Array.from({ length: 10 }, async () => {
        for (let i = 0; i < 34; i++) statuses.push((await streams.get('/assets')).status);
      }),
    );
    expect(statuses.filter((s) => s === 200)).toHaveLength(300);
    expect(statuses.filter((s) => s === 429)).toHaveLength(40);
  });
});

describe("the contract's default limits (120 a minute per key, 60 per IP when anonymous)", () => {
  let defaults: Harness;
  beforeAll(async () => {
    // The harness lifts the per-key limit for the other suites; unset here, the configuration's default applies.
    defaults = await startHarness(
      { CUSTODY_RATE_LIMIT_PER_KEY: undefined as unknown as string },
      { worker: false },
    );
  });
  afterAll(() => defaults?.close());

  it('a key gets 120 requests a minute, then 429', async () => {
    const keyed = client(defaults.api, await createKey(defaults.api, await createTenant(defaults.api)));
    const statuses: number[] = [];
    for (let i = 0; i < 121; i++) statuses.push((await keyed.get('/assets')).status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(120);
    expect(statuses[120]).toBe(429);
  });

  it('an address gets 60 anonymous requests a minute, then 429', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 61; i++)
      statuses.push((await request(defaults.api.getHttpServer()).get('/health')).status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(60);
    expect(statuses[60]).toBe(429);
  });
});
