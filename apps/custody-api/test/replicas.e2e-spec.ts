import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { bootApp } from '@tessera/testing';
import { AppModule } from '../src/app.module';
import { loadEnv } from '../src/config/env';
import {
  admin,
  ASSETS,
  client,
  createKey,
  createTenant,
  type Harness,
  startHarness,
  waitFor,
} from './support';

/**
 * Two API replicas on one database and one Redis namespace. Keys are cached 5 s and tenant asset settings
 * 5 s, so a change seen on replica B within 500 ms came from the Redis invalidation, not from the TTL.
 */
let h: Harness;
let b: NestFastifyApplication;

beforeAll(async () => {
  h = await startHarness({}, { worker: false });
  b = await bootApp(AppModule.forRoot(loadEnv({ ...h.env.env, CUSTODY_RATE_LIMIT_PER_KEY: '100000' })), {
    rpc: false,
  });
});
afterAll(async () => {
  await b?.close();
  await h?.close();
});

describe('cross-replica cache invalidation', () => {
  it('a key revoked through replica A answers 401 on replica B at once', async () => {
    const key = await createKey(h.api, await createTenant(h.api));
    await client(b, key).get('/assets').expect(200); // B now caches the key
    await admin(h.api).post(`/admin/keys/${key.apiKey}/revoke`).expect(200);
    await waitFor(
      () =>
        client(b, key)
          .get('/assets')
          .then((r) => r.status),
      (status) => status === 401,
      500,
    );
    await client(h.api, key).get('/assets').expect(401);
  });

  it('an asset disabled through replica A disappears from GET /assets on replica B at once', async () => {
    const tenantId = await createTenant(h.api);
    const onB = client(b, await createKey(h.api, tenantId));
    const ids = () => onB.get('/assets').then((r) => (r.body.items as { id: string }[]).map((a) => a.id));
    expect(await ids()).toContain(ASSETS.XRP); // B now caches the tenant's settings
    await admin(h.api).post(`/admin/tenants/${tenantId}/assets/${ASSETS.XRP}/disable`).expect(200);
    await waitFor(ids, (list) => !list.includes(ASSETS.XRP), 500);
  });
});
