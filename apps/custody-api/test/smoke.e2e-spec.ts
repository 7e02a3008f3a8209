import { ASSETS, client, createKey, createTenant, fundedWallet, type Harness, startHarness } from './support';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h?.close());

it('smoke', async () => {
  const tenant = await createTenant(h.api);
  const key = await createKey(h.api, tenant);
  const api = client(h.api, key);
  const assets = await api.get('/assets');
  expect(assets.status).toBe(200);
  const w = await fundedWallet(api, ASSETS.BTC, '1.5');
  const bal = await api.get(`/wallets/${w.walletId}/balance`);
  expect(bal.body).toMatchObject({ total: '1.5', available: '1.5' });
});
