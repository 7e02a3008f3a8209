/**
 * The OpenAPI document served at /docs and /swagger is the committed docs/openapi/custody-api.json, and the
 * answers of the real app match the response schemas it is generated from (docs/openapi.md).
 */
import {
  addressBookEntryResponse,
  assetList,
  balanceResponse,
  custodyError,
  transactionPage,
  transactionResponse,
  vaultPage,
  vaultResponse,
  walletDetailResponse,
  walletResponse,
} from '@tessera/contracts';
import { OPENAPI_DOCS_CSP } from '@tessera/platform';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import request from 'supertest';
import { ASSETS, client, createKey, createTenant, type Harness, startHarness } from './support';

let h: Harness;
beforeAll(async () => {
  h = await startHarness({}, { worker: false });
});
afterAll(() => h?.close());

const http = () => request(h.api.getHttpServer());
const committed = JSON.parse(readFileSync(join(__dirname, '../../../docs/openapi/custody-api.json'), 'utf8'));

describe('OpenAPI document', () => {
  it.each(['/docs/openapi.json', '/swagger/openapi.json', '/swagger/json'])(
    'serves the committed document at %s without a signature',
    async (path) => {
      const res = await http().get(path).expect(200);
      expect(res.headers['content-type']).toMatch(/application\/json/);
      expect(res.body).toEqual(committed);
    },
  );

  it('declares the three signing headers, required together, on every partner operation', () => {
    expect(committed.openapi).toBe('3.1.0');
    const schemes = committed.components.securitySchemes;
    expect(Object.values(schemes).map((s) => (s as { name: string }).name)).toEqual([
      'X-API-Key',
      'X-Timestamp',
      'X-Signature',
    ]);
    for (const [path, item] of Object.entries(committed.paths as Record<string, Record<string, any>>)) {
      for (const operation of Object.values(item)) {
        const expected = path === '/health' ? [] : [{ apiKey: [], timestamp: [], signature: [] }];
        expect([path, operation.security]).toEqual([path, expected]);
      }
    }
    expect(Object.keys(committed.paths).some((p) => p.startsWith('/admin'))).toBe(false);
    expect(Object.keys(committed.webhooks)).toEqual([
      'balance.updated',
      'transaction.created',
      'transaction.status.updated',
      'wallet.created',
      'webhook.test',
    ]);
    expect(committed.components.responses.TooManyRequests.content).toEqual({});
    expect(committed.components.responses.TooManyRequests.headers['Retry-After'].schema.type).toBe('integer');
  });

  it('renders the reference at /docs and /swagger from local assets under a CSP without inline scripts', async () => {
    for (const base of ['/docs', '/swagger']) {
      const page = await http().get(base).expect(200);
      expect(page.headers['content-type']).toMatch(/text\/html/);
      expect(page.headers['content-security-policy']).toBe(OPENAPI_DOCS_CSP);
      expect(OPENAPI_DOCS_CSP).toMatch(/script-src 'self'(;|$)/);
      const urls = [...page.text.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]);
      expect(urls).toEqual([`${base}/swagger-ui.css`, `${base}/swagger-ui-bundle.js`, `${base}/init.js`]);
      expect(page.text).not.toMatch(/<script>/);
      for (const url of urls) await http().get(url!).expect(200);
      const init = await http().get(`${base}/init.js`).expect(200);
      expect(init.text).toContain(`"${base}/openapi.json"`);
      expect(init.text).toContain('validatorUrl: null');
    }
    await http().get('/swagger/nothing.js').expect(404);
  });
});

describe('answers match the documented schemas', () => {
  it('vaults, wallets, balances, assets, the address book and transactions', async () => {
    const api = client(h.api, await createKey(h.api, await createTenant(h.api)));
    const vault = await api.post('/vaults', { externalId: 'doc-1', name: 'Doc' }).expect(201);
    expect(vaultResponse.strict().parse(vault.body)).toEqual(vault.body);
    vaultPage.parse((await api.get('/vaults').expect(200)).body);
    const wallet = await api.post(`/vaults/${vault.body.id}/wallets`, { assetId: ASSETS.BTC }).expect(201);
    walletResponse.strict().parse(wallet.body);
    walletDetailResponse.strict().parse((await api.get(`/wallets/${wallet.body.walletId}`).expect(200)).body);
    balanceResponse
      .strict()
      .parse((await api.get(`/wallets/${wallet.body.walletId}/balance`).expect(200)).body);
    assetList.parse((await api.get('/assets').expect(200)).body);
    const entry = await api
      .post('/address-book', { assetId: ASSETS.BTC, address: wallet.body.depositAddress, label: 'self' })
      .expect(201);
    addressBookEntryResponse.strict().parse(entry.body);
    const deposit = await api
      .post('/sandbox/deposits', { walletId: wallet.body.walletId, amount: '0.5' })
      .expect(201);
    transactionResponse.strict().parse(deposit.body);
    const page = await api.get('/transactions?take=5').expect(200);
    expect(transactionPage.parse(page.body).items).toHaveLength(1);
    const bad = await api.post('/vaults', { name: '' }).expect(400);
    expect(custodyError.strict().parse(bad.body).errors).toHaveProperty('externalId');
  });
});
