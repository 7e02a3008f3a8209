import { createHmac } from 'node:crypto';
import { computeRequestSignature, signRequest } from '@tessera/auth';
import { TEST_ADMIN_TOKEN, TEST_MASTER_KEY } from '@tessera/testing';
import Redis from 'ioredis';
import request from 'supertest';
import {
  admin,
  ASSETS,
  client,
  createKey,
  createTenant,
  type Harness,
  type KeyPair,
  sql,
  startHarness,
} from './support';

let h: Harness;
let tenantId: string;
let key: KeyPair;

beforeAll(async () => {
  h = await startHarness({ TRUSTED_PROXIES: '127.0.0.1' }, { worker: false });
  tenantId = await createTenant(h.api);
  key = await createKey(h.api, tenantId);
});
afterAll(() => h?.close());

const http = () => request(h.api.getHttpServer());

describe('operator API', () => {
  it('creates tenants and keys, shows the secret once and stores it encrypted', async () => {
    const res = await admin(h.api)
      .post(`/admin/tenants/${tenantId}/keys`, {
        environment: 'live',
        scopes: ['vaults:read'],
        ipAllowList: ['10.0.0.0/8'],
      })
      .expect(201);
    expect(res.body).toEqual({
      apiKey: expect.stringMatching(/^ck_live_[0-9a-f]{32}$/),
      apiSecret: expect.any(String),
      environment: 'live',
      scopes: ['vaults:read'],
      ipAllowList: ['10.0.0.0/8'],
    });
    expect(key.apiKey).toMatch(/^ck_test_[0-9a-f]{32}$/);
    const [row] = await sql<{ secret_sealed: string }>(
      h,
      'SELECT secret_sealed FROM api_keys WHERE api_key = $1',
      [res.body.apiKey],
    );
    expect(row.secret_sealed).toMatch(/^v1\./);
    expect(row.secret_sealed).not.toContain(res.body.apiSecret);
  });

  it('refuses a wrong token (401), bad bodies (400 with errors), unknown tenants (404)', async () => {
    await http()
      .post('/admin/tenants')
      .set('authorization', 'Bearer nope-nope-nope-nope')
      .send({})
      .expect(401);
    const bad = await admin(h.api).post(`/admin/tenants/${tenantId}/keys`, {
      environment: 'prod',
      scopes: ['nope'],
      ipAllowList: ['300.0.0.1/8'],
    });
    expect(bad.status).toBe(400);
    expect(Object.keys(bad.body.errors).sort()).toEqual(['environment', 'ipAllowList.0', 'scopes.0']);
    await admin(h.api)
      .post('/admin/tenants/00000000-0000-4000-8000-000000000000/keys', {
        environment: 'test',
        scopes: ['vaults:read'],
      })
      .expect(404);
    const live = await admin(h.api).post(`/admin/tenants/${tenantId}/keys`, {
      environment: 'live',
      scopes: ['sandbox:write'],
    });
    expect(live.status).toBe(400);
  });

  it('revokes a key: it stops working at once', async () => {
    const doomed = await createKey(h.api, tenantId);
    await client(h.api, doomed).get('/assets').expect(200);
    await admin(h.api).post(`/admin/keys/${doomed.apiKey}/revoke`).expect(200);
    const res = await client(h.api, doomed).get('/assets').expect(401);
    expect(res.body).toEqual({ message: 'Invalid API key or signature' });
    await admin(h.api).post('/admin/keys/ck_test_unknown/revoke').expect(404);
  });
});

describe('signed requests', () => {
  it('accepts a correct signature with a seconds or a milliseconds timestamp', async () => {
    await client(h.api, key).get('/assets').expect(200);
    const seconds = String(Math.floor(Date.now() / 1000));
    const headers = signRequest(key.apiKey, key.apiSecret, {
      method: 'GET',
      pathWithQuery: '/assets',
      timestamp: seconds,
    });
    await http().get('/assets').set(headers).expect(200);
  });

  it('signs the exact raw body: the same JSON re-serialised does not verify (401)', async () => {
    const raw = '{"externalId":"raw-1","name":"Raw"}';
    const headers = signRequest(key.apiKey, key.apiSecret, {
      method: 'POST',
      pathWithQuery: '/vaults',
      body: raw,
    });
    const res = await http()
      .post('/vaults')
      .set(headers)
      .set('content-type', 'application/json')
      .send('{"externalId": "raw-1", "name": "Raw"}');
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ message: 'Invalid API key or signature' });
  });

  it('401 for a bad signature, missing headers, an unknown key', async () => {
    const headers = signRequest(key.apiKey, key.apiSecret, { method: 'GET', pathWithQuery: '/assets' });
    const bad = await http()
      .get('/assets')
      .set({ ...headers, 'x-signature': '0'.repeat(64) })
      .expect(401);
    expect(bad.body).toEqual({ message: 'Invalid API key or signature' });
    const other = await http().get('/assets?take=1').set(headers).expect(401);
    expect(other.body).toEqual({ message: 'Invalid API key or signature' });
    const missing = await http().get('/assets').expect(401);
    expect(missing.body).toEqual({ message: 'X-API-Key, X-Timestamp and X-Signature are required' });
    // An unknown key gets the very message a wrong signature gets (issue 15: no key-existence oracle).
    const unknown = await http()
      .get('/assets')
      .set({ ...headers, 'x-api-key': 'ck_test_00000000000000000000000000000000' })
      .expect(401);
    expect(unknown.body).toEqual(bad.body);
    const malformed = await http()
      .get('/assets')
      .set({ ...headers, 'x-api-key': 'not-a-key' })
      .expect(401);
    expect(malformed.body).toEqual(bad.body);
  });

  it('401 for clock drift beyond 30 s, either way', async () => {
    for (const offset of [-31_000, 31_000]) {
      const timestamp = String(Date.now() + offset);
      const headers = signRequest(key.apiKey, key.apiSecret, {
        method: 'GET',
        pathWithQuery: '/assets',
        timestamp,
      });
      const res = await http().get('/assets').set(headers).expect(401);
      expect(res.body).toEqual({ message: 'X-Timestamp is more than 30 seconds from server time' });
    }
  });

  it('accepts a timestamp up to 30 s off, either way, in seconds or milliseconds', async () => {
    // 27 s: a seconds timestamp is floored (up to 1 s older), and a loaded CI machine may take another second.
    for (const offset of [-27_000, 27_000]) {
      for (const timestamp of [
        String(Date.now() + offset),
        String(Math.floor((Date.now() + offset) / 1000)),
      ]) {
        const headers = signRequest(key.apiKey, key.apiSecret, {
          method: 'GET',
          pathWithQuery: '/assets',
          timestamp,
        });
        await http().get('/assets').set(headers).expect(200);
      }
    }
  });

  it('401 on replay: the second use of one signature says it was already used, for the next 60 s', async () => {
    const headers = signRequest(key.apiKey, key.apiSecret, { method: 'GET', pathWithQuery: '/assets' });
    await http().get('/assets').set(headers).expect(200);
    const replay = await http().get('/assets').set(headers).expect(401);
    expect(replay.body.message).toMatch(/already been used/);
    // The (key, timestamp, signature) tuple is kept for 60 s: longer than a timestamp stays within the drift.
    const redis = new Redis(h.env.env.REDIS_URL!);
    try {
      const [stored] = await redis.keys(
        `${h.env.env.QUEUE_PREFIX}*replay:${key.apiKey}:${headers['x-timestamp']}:*`,
      );
      expect(stored).toBeDefined();
      const ttl = await redis.ttl(stored!);
      expect(ttl).toBeGreaterThan(55);
      expect(ttl).toBeLessThanOrEqual(60);
    } finally {
      redis.disconnect();
    }
  });

  it('403 when the key lacks the endpoint scope', async () => {
    const readOnly = await createKey(h.api, tenantId, { scopes: ['assets:read'] });
    const res = await client(h.api, readOnly).post('/vaults', { externalId: 'x', name: 'x' }).expect(403);
    expect(res.body).toEqual({ message: 'This API key lacks the scope vaults:write' });
  });

  it('403 from an address outside the allow-list; X-Forwarded-For counts only from a trusted proxy', async () => {
    const fenced = await createKey(h.api, tenantId, { ipAllowList: ['10.0.0.0/8'] });
    const res = await client(h.api, fenced).get('/assets').expect(403);
    expect(res.body).toEqual({ message: 'Client IP address is not in the API key allow-list' });
    // The test client connects from 127.0.0.1, configured here as a trusted proxy.
    await client(h.api, fenced).get('/assets', { 'x-forwarded-for': '10.1.2.3' }).expect(200);
    await client(h.api, fenced).get('/assets', { 'x-forwarded-for': '192.168.0.1' }).expect(403);
    const open = await createKey(h.api, tenantId, { ipAllowList: ['127.0.0.1/32'] });
    await client(h.api, open).get('/assets').expect(200);
  });

  it('keeps sandbox and production apart: a test key cannot see live data (404)', async () => {
    const live = await createKey(h.api, tenantId, { environment: 'live' });
    const vault = await client(h.api, live)
      .post('/vaults', { externalId: 'shared-ext', name: 'Live' })
      .expect(201);
    await client(h.api, key).get(`/vaults/${vault.body.id}`).expect(404);
    // The same externalId is free in the other environment.
    await client(h.api, key).post('/vaults', { externalId: 'shared-ext', name: 'Sandbox' }).expect(201);
    // Sandbox deposits need a test key with sandbox:write.
    const wallet = await client(h.api, live)
      .post(`/vaults/${vault.body.id}/wallets`, { assetId: ASSETS.BTC })
      .expect(201);
    await client(h.api, live)
      .post('/sandbox/deposits', { walletId: wallet.body.walletId, amount: '1' })
      .expect(403);
  });

  it('the shared signer matches the documented formula', () => {
    const sig = computeRequestSignature('secret', {
      timestamp: '1700000000',
      method: 'get',
      pathWithQuery: '/transactions?take=5',
      body: '',
    });
    const expected = createHmac('sha256', 'secret').update('1700000000GET/transactions?take=5').digest('hex');
    expect(sig).toBe(expected);
    expect(TEST_MASTER_KEY).toBeDefined();
    expect(TEST_ADMIN_TOKEN).toBeDefined();
  });
});

describe('operator API off', () => {
  it('answers 404 when ADMIN_TOKEN is unset', async () => {
    const off = await startHarness({ ADMIN_TOKEN: '' }, { worker: false });
    try {
      const res = await request(off.api.getHttpServer())
        .post('/admin/tenants')
        .set('authorization', `Bearer ${TEST_ADMIN_TOKEN}`)
        .send({ name: 'x' });
      expect(res.status).toBe(404);
    } finally {
      await off.close();
    }
  });
});
