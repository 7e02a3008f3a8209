import { type DispatcherProcess, startDispatcherProcess } from '@tessera/testing';
import { BASIC_SCOPES, client, createKey, createTenant, type Harness, startHarness } from './support';

let h: Harness;
let dispatcher: DispatcherProcess;

beforeAll(async () => {
  h = await startHarness({}, { worker: false });
  dispatcher = await startDispatcherProcess(h.env.env);
}, 60_000);

afterAll(async () => {
  await dispatcher?.stop();
  await h?.close();
});

describe('custody webhook endpoints, served by the real dispatcher over RPC', () => {
  it('PUT /webhooks/outbound shows the secret once, GET never; scopes are enforced', async () => {
    const tenant = await createTenant(h.api);
    const api = client(
      h.api,
      await createKey(h.api, tenant, { scopes: [...BASIC_SCOPES, 'webhooks:read', 'webhooks:write'] }),
    );

    const first = await api.put('/webhooks/outbound', { url: 'https://127.0.0.1:9/hooks' }).expect(200);
    expect(first.body).toMatchObject({
      url: 'https://127.0.0.1:9/hooks',
      isConfigured: true,
      subscribedEventTypes: null,
    });
    expect(first.body.signingSecret).toMatch(/^whsec_/);

    const again = await api.put('/webhooks/outbound', { url: 'https://127.0.0.1:9/hooks' }).expect(200);
    expect(again.body.signingSecret).toBeNull();
    const read = await api.get('/webhooks/outbound').expect(200);
    expect(read.body).toMatchObject({
      url: 'https://127.0.0.1:9/hooks',
      signingSecret: null,
      isConfigured: true,
    });

    const catalog = await api.get('/webhooks/events/catalog').expect(200);
    expect(JSON.stringify(catalog.body)).toContain('transaction.status.updated');

    await api.get('/webhooks/deliveries?pageSize=201').expect(400);

    const readOnly = client(h.api, await createKey(h.api, tenant, { scopes: ['webhooks:read'] }));
    await readOnly.get('/webhooks/outbound').expect(200);
    const denied = await readOnly.put('/webhooks/outbound', { url: 'https://127.0.0.1:9/other' }).expect(403);
    expect(denied.body).toEqual({ message: 'This API key lacks the scope webhooks:write' });
  });

  it('refuses a non-https URL with a 400 in the custody shape', async () => {
    const tenant = await createTenant(h.api);
    const api = client(h.api, await createKey(h.api, tenant, { scopes: ['webhooks:write'] }));
    const res = await api.put('/webhooks/outbound', { url: 'http://127.0.0.1:9/hooks' }).expect(400);
    expect(typeof res.body.message).toBe('string');
  });
});
