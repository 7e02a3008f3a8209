import request from 'supertest';
import { client, createKey, createTenant, type Harness, startHarness } from './support';

let h: Harness;
beforeAll(async () => {
  h = await startHarness(
    { CUSTODY_RATE_LIMIT_PER_KEY: '3', CUSTODY_RATE_LIMIT_PER_IP: '2' },
    { worker: false },
  );
});
afterAll(() => h?.close());

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
});
