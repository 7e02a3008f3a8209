/**
 * The OpenAPI document served at /docs and /swagger is the committed docs/openapi/custody-api.json, and the
 * answers of the real app match the response schemas it is generated from (docs/openapi.md).
 */
import {
  addressBookEntryResponse,
  assetList,
  balanceResponse,
  createdKeyResponse,
  custodyError,
  gasStationResponse,
  keyRevokedResponse,
  reconciliationRun,
  reconciliationRunSummary,
  tenantAssetList,
  tenantAssetResponse,
  tenantResponse,
  transactionPage,
  transactionResponse,
  vaultPage,
  vaultResponse,
  walletDetailResponse,
  walletResponse,
  withdrawalPolicyView,
} from '@tessera/contracts';
import { RequestMethod } from '@nestjs/common';
import { METHOD_METADATA, PATH_METADATA } from '@nestjs/common/constants';
import { DiscoveryService, MetadataScanner } from '@nestjs/core';
import { OPENAPI_DOCS_CSP } from '@tessera/platform';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import request from 'supertest';
import { admin, ASSETS, client, createKey, createTenant, type Harness, startHarness } from './support';

let h: Harness;
beforeAll(async () => {
  h = await startHarness({}, { worker: false });
});
afterAll(() => h?.close());

const http = () => request(h.api.getHttpServer());
const committed = JSON.parse(readFileSync(join(__dirname, '../../../docs/openapi/custody-api.json'), 'utf8'));

/** `METHOD /path/:param` of every route the app's controllers serve under /admin, from Nest's route metadata. */
function adminRoutes(app: Harness['api']): string[] {
  const discovery = app.get(DiscoveryService, { strict: false });
  const scanner = new MetadataScanner();
  return discovery.getControllers().flatMap(({ metatype }) => {
    const base = `/${String(Reflect.getMetadata(PATH_METADATA, metatype!) ?? '')}`.replace(/\/+$/, '');
    if (!base.startsWith('/admin')) return [];
    const prototype = (metatype as { prototype: Record<string, unknown> }).prototype;
    return scanner.getAllMethodNames(prototype).flatMap((name) => {
      const handler = prototype[name] as object;
      const path = Reflect.getMetadata(PATH_METADATA, handler) as string | undefined;
      if (path === undefined) return [];
      const method = RequestMethod[Reflect.getMetadata(METHOD_METADATA, handler) as RequestMethod];
      return [`${method} ${`${base}/${path}`.replace(/\/+$/, '').replace(/\/{2,}/g, '/')}`];
    });
  });
}

describe('OpenAPI document', () => {
  it.each(['/docs/openapi.json', '/swagger/openapi.json', '/swagger/json'])(
    'serves the committed document at %s without a signature',
    async (path) => {
      const res = await http().get(path).expect(200);
      expect(res.headers['content-type']).toMatch(/application\/json/);
      expect(res.body).toEqual(committed);
    },
  );

  it('declares the three signing headers, required together, on every partner operation, and the bearer token on every operator one', () => {
    expect(committed.openapi).toBe('3.1.0');
    const schemes = committed.components.securitySchemes;
    expect(Object.values(schemes).map((s) => (s as { name?: string }).name ?? s)).toEqual([
      'X-API-Key',
      'X-Timestamp',
      'X-Signature',
      { type: 'http', scheme: 'bearer', description: 'ADMIN_TOKEN' },
    ]);
    for (const [path, item] of Object.entries(committed.paths as Record<string, Record<string, any>>)) {
      for (const operation of Object.values(item)) {
        const expected =
          path === '/health'
            ? []
            : path.startsWith('/admin/')
              ? [{ operatorToken: [] }]
              : [{ apiKey: [], timestamp: [], signature: [] }];
        expect([path, operation.security]).toEqual([path, expected]);
        expect([path, operation.tags.includes('operator')]).toEqual([path, path.startsWith('/admin/')]);
      }
    }
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

  it('documents every operator route the app serves, and only those', () => {
    const served = adminRoutes(h.api);
    expect(served.length).toBeGreaterThanOrEqual(12);
    const documented = Object.entries(committed.paths as Record<string, Record<string, unknown>>)
      .filter(([path]) => path.startsWith('/admin/'))
      .flatMap(([path, item]) =>
        Object.keys(item).map((method) => `${method.toUpperCase()} ${path.replace(/\{(\w+)\}/g, ':$1')}`),
      );
    expect(documented.sort()).toEqual(served.sort());
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

describe('operator answers match the documented schemas', () => {
  it('tenants, keys, the gas station, assets, policies and reconciliations', async () => {
    const operator = admin(h.api);
    const tenant = await operator.post('/admin/tenants', { name: 'Doc operator' }).expect(201);
    expect(tenantResponse.strict().parse(tenant.body)).toEqual(tenant.body);
    const tenantId = tenant.body.id as string;
    const key = await operator
      .post(`/admin/tenants/${tenantId}/keys`, {
        environment: 'test',
        scopes: 'all',
        ipAllowList: ['10.0.0.0/8'],
      })
      .expect(201);
    createdKeyResponse.strict().parse(key.body);
    keyRevokedResponse
      .strict()
      .parse((await operator.post(`/admin/keys/${key.body.apiKey}/revoke`).expect(200)).body);
    gasStationResponse
      .strict()
      .parse((await operator.get(`/admin/tenants/${tenantId}/gas-station`).expect(200)).body);
    const assets = tenantAssetList
      .strict()
      .parse((await operator.get(`/admin/tenants/${tenantId}/assets`).expect(200)).body);
    expect(assets.items.length).toBeGreaterThan(0);
    for (const action of ['disable', 'enable'])
      tenantAssetResponse
        .strict()
        .parse((await operator.post(`/admin/tenants/${tenantId}/assets/BTC/${action}`).expect(200)).body);
    withdrawalPolicyView
      .strict()
      .parse((await operator.get(`/admin/tenants/${tenantId}/policies/test`).expect(200)).body);
    const policy = await operator
      .put(`/admin/tenants/${tenantId}/policies/live`, { maxAmount: [{ asset: 'BTC', amount: '1.5' }] })
      .expect(200);
    expect(withdrawalPolicyView.strict().parse(policy.body).maxAmount).toHaveLength(1);
    const run = await operator.post('/admin/reconciliations', { tenantId }).expect(201);
    reconciliationRun.strict().parse(run.body);
    reconciliationRun
      .strict()
      .parse((await operator.get(`/admin/reconciliations/${run.body.id}`).expect(200)).body);
    const runs = (await operator.get('/admin/reconciliations?take=5').expect(200)).body;
    expect(runs.items.map((r: unknown) => reconciliationRunSummary.strict().parse(r).id)).toContain(
      run.body.id,
    );
    const refused = await http().post('/admin/tenants').send({ name: 'x' }).expect(401);
    expect(custodyError.strict().parse(refused.body).message).toBeTruthy();
    const bad = await operator.post('/admin/tenants', { name: '' }).expect(400);
    expect(custodyError.strict().parse(bad.body).errors).toHaveProperty('name');
  });
});
