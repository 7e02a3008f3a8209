import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { bootApp, TEST_ADMIN_TOKEN } from '@tessera/testing';
import request from 'supertest';
import { AppModule } from '../src/app.module';
import { loadEnv } from '../src/config/env';
import { AssetsRepository } from '../src/modules/assets/assets.repository';
import {
  CUSTODY_SANDBOX_ONLY_SCOPES as SANDBOX_ONLY_SCOPES,
  CUSTODY_SCOPES as SCOPES,
} from '@tessera/contracts';
import {
  admin,
  ASSETS,
  client,
  type Client,
  createKey,
  createTenant,
  fundedWallet,
  type Harness,
  newIdempotencyKey,
  sql,
  startHarness,
  waitFor,
} from './support';

const CLI = join(__dirname, '../dist/cli.js');
const BTC_BOOK = 'tb1qw508d6qejxtdg4y5r3zarvary0c5xw7kxpjzsx';
const ETH_BOOK = '0x52908400098527886E0F7030069857D2E4169EE7';
const XRP_BOOK = 'rHb9CJAWyB4rj91VRWn96DkukG4bwdtyTh';

let h: Harness;

beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h?.close());

const adminGet = (path: string) =>
  request(h.api.getHttpServer()).get(path).set('authorization', `Bearer ${TEST_ADMIN_TOKEN}`);

async function tenantWithKey(name: string): Promise<{ tenantId: string; api: Client }> {
  const tenantId = await createTenant(h.api, name);
  return { tenantId, api: client(h.api, await createKey(h.api, tenantId)) };
}

const symbols = async (api: Client) =>
  ((await api.get('/assets').expect(200)).body.items as { symbol: string }[]).map((a) => a.symbol).sort();

describe('per-tenant assets', () => {
  it('disabling hides the asset from GET /assets for that tenant only; enabling brings it back', async () => {
    const a = await tenantWithKey('A');
    const b = await tenantWithKey('B');
    expect(await symbols(a.api)).toEqual(['BTC', 'ETH', 'USDT', 'XRP']);
    const disabled = await admin(h.api)
      .post(`/admin/tenants/${a.tenantId}/assets/${ASSETS.XRP}/disable`)
      .expect(200);
    expect(disabled.body).toEqual({
      tenantId: a.tenantId,
      assetId: ASSETS.XRP,
      symbol: 'XRP',
      network: 'ripple',
      enabled: false,
      updatedAt: expect.any(String),
    });
    expect(await symbols(a.api)).toEqual(['BTC', 'ETH', 'USDT']);
    expect(await symbols(b.api)).toEqual(['BTC', 'ETH', 'USDT', 'XRP']);
    // Disabling twice is the same state.
    await admin(h.api).post(`/admin/tenants/${a.tenantId}/assets/${ASSETS.XRP}/disable`).expect(200);

    const view = await adminGet(`/admin/tenants/${a.tenantId}/assets`).expect(200);
    expect(view.body.items).toHaveLength(4);
    expect(view.body.items).toEqual(
      expect.arrayContaining([
        { ...disabled.body, updatedAt: expect.any(String) },
        {
          tenantId: a.tenantId,
          assetId: ASSETS.BTC,
          symbol: 'BTC',
          network: 'bitcoin',
          enabled: true,
          updatedAt: null,
        },
      ]),
    );

    const enabled = await admin(h.api)
      .post(`/admin/tenants/${a.tenantId}/assets/${ASSETS.XRP}/enable`)
      .expect(200);
    expect(enabled.body).toMatchObject({ assetId: ASSETS.XRP, enabled: true, updatedAt: expect.any(String) });
    expect(await symbols(a.api)).toEqual(['BTC', 'ETH', 'USDT', 'XRP']);
  });

  it('a disabled asset: 400 on assetId for a new wallet and a new address-book entry; 201 again once enabled', async () => {
    const { tenantId, api } = await tenantWithKey('Wallets');
    const vault = (await api.post('/vaults', { externalId: 'v1', name: 'V' }).expect(201)).body;
    await admin(h.api).post(`/admin/tenants/${tenantId}/assets/${ASSETS.ETH}/disable`).expect(200);

    const wallet = await api.post(`/vaults/${vault.id}/wallets`, { assetId: ASSETS.ETH }).expect(400);
    expect(wallet.body).toEqual({
      message: 'Asset ETH is disabled for this tenant',
      errors: { assetId: ['ETH is disabled for this tenant'] },
    });
    const entry = await api
      .post('/address-book', { assetId: ASSETS.ETH, address: ETH_BOOK, label: 'x' })
      .expect(400);
    expect(entry.body.errors).toEqual({ assetId: ['ETH is disabled for this tenant'] });
    const [counts] = await sql<{ wallets: number; entries: number }>(
      h,
      `SELECT (SELECT count(*)::int FROM wallets WHERE tenant_id = $1) AS wallets,
              (SELECT count(*)::int FROM address_book WHERE tenant_id = $1) AS entries`,
      [tenantId],
    );
    expect(counts).toEqual({ wallets: 0, entries: 0 });
    // Other assets are unaffected.
    await api.post(`/vaults/${vault.id}/wallets`, { assetId: ASSETS.BTC }).expect(201);

    await admin(h.api).post(`/admin/tenants/${tenantId}/assets/${ASSETS.ETH}/enable`).expect(200);
    await api.post(`/vaults/${vault.id}/wallets`, { assetId: ASSETS.ETH }).expect(201);
    await api.post('/address-book', { assetId: ASSETS.ETH, address: ETH_BOOK, label: 'x' }).expect(201);
  });

  it('transfers and withdrawals of a disabled asset are 400 and create nothing; existing wallets still receive', async () => {
    const { tenantId, api } = await tenantWithKey('Moves');
    await api.post('/address-book', { assetId: ASSETS.BTC, address: BTC_BOOK, label: 'Cold' }).expect(201);
    const a = await fundedWallet(api, ASSETS.BTC, '2');
    const b = await fundedWallet(api, ASSETS.BTC, undefined);
    await admin(h.api).post(`/admin/tenants/${tenantId}/assets/BTC/disable`).expect(200);

    const transfer = () =>
      api.post(
        '/transactions/transfer',
        { sourceWalletId: a.walletId, destinationWalletId: b.walletId, amount: '0.5' },
        { 'idempotency-key': newIdempotencyKey() },
      );
    const withdraw = () =>
      api.post(
        '/transactions/withdraw',
        { sourceWalletId: a.walletId, destinationAddress: BTC_BOOK, amount: '0.5' },
        { 'idempotency-key': newIdempotencyKey() },
      );
    for (const res of [await transfer(), await withdraw()]) {
      expect(res.status).toBe(400);
      expect(res.body).toEqual({
        message: 'Asset BTC is disabled for this tenant',
        errors: { sourceWalletId: ['BTC is disabled for this tenant'] },
      });
    }
    const [count] = await sql<{ n: number }>(
      h,
      `SELECT count(*)::int AS n FROM transactions WHERE tenant_id = $1 AND type <> 'Deposit'`,
      [tenantId],
    );
    expect(count.n).toBe(0);
    expect((await api.get(`/wallets/${a.walletId}/balance`).expect(200)).body).toMatchObject({
      total: '2',
      available: '2',
      locked: '0',
    });
    // Funds arriving on-chain cannot be refused: an existing wallet is still credited.
    const dep = await api.post('/sandbox/deposits', { walletId: b.walletId, amount: '0.1' }).expect(201);
    await waitFor(
      () => api.get(`/transactions/${dep.body.transactionId}`).then((r) => r.body.status),
      (s) => s === 'Completed',
    );

    await admin(h.api).post(`/admin/tenants/${tenantId}/assets/BTC/enable`).expect(200);
    expect((await transfer()).status).toBe(201);
    expect((await withdraw()).status).toBe(201);
  });

  it('the transfer path reads the disabled set from memory: no query per request once cached', async () => {
    const { api } = await tenantWithKey('Hot');
    const a = await fundedWallet(api, ASSETS.BTC, '1');
    const b = await fundedWallet(api, ASSETS.BTC, undefined);
    const body = { sourceWalletId: a.walletId, destinationWalletId: b.walletId, amount: '0.01' };
    const send = () => api.post('/transactions/transfer', body, { 'idempotency-key': newIdempotencyKey() });
    const cachedAt = Date.now();
    expect((await send()).status).toBe(201);
    const spy = jest.spyOn(h.api.get(AssetsRepository, { strict: false }), 'disabledFor');
    try {
      for (let i = 0; i < 5; i++) expect((await send()).status).toBe(201);
      // At most one refresh per 5 s cache period (none when the loop is quicker than that).
      expect(spy.mock.calls.length).toBeLessThanOrEqual(Math.floor((Date.now() - cachedAt) / 5000));
    } finally {
      spy.mockRestore();
    }
  });

  it('operator errors: 404 for an unknown or malformed tenant and an unknown asset, 401 without the token', async () => {
    const tenantId = await createTenant(h.api, 'Errors');
    const unknownTenant = '00000000-0000-4000-8000-000000000000';
    for (const path of [
      `/admin/tenants/${unknownTenant}/assets/${ASSETS.BTC}/disable`,
      `/admin/tenants/not-a-uuid/assets/${ASSETS.BTC}/enable`,
    ]) {
      expect((await admin(h.api).post(path).expect(404)).body).toEqual({ message: 'Tenant not found' });
    }
    await adminGet(`/admin/tenants/${unknownTenant}/assets`).expect(404);
    for (const asset of ['DOGE', unknownTenant]) {
      const res = await admin(h.api).post(`/admin/tenants/${tenantId}/assets/${asset}/disable`).expect(404);
      expect(res.body).toEqual({ message: 'Asset not found' });
    }
    await request(h.api.getHttpServer())
      .post(`/admin/tenants/${tenantId}/assets/${ASSETS.BTC}/disable`)
      .expect(401);
    const [rows] = await sql<{ n: number }>(
      h,
      `SELECT count(*)::int AS n FROM tenant_assets WHERE tenant_id = $1`,
      [tenantId],
    );
    expect(rows.n).toBe(0);
  });

  it('the CLI has the same commands; the API sees a change made elsewhere within its 5 s cache', async () => {
    const { tenantId, api } = await tenantWithKey('Cli');
    const cli = async (...args: string[]) => {
      const { stdout } = await promisify(execFile)(process.execPath, [CLI, ...args], {
        env: { ...process.env, ...h.env.env, LOG_LEVEL: 'error' },
      });
      return JSON.parse(stdout);
    };
    const disabled = await cli('disable-asset', tenantId, 'usdt');
    expect(disabled).toMatchObject({ tenantId, assetId: ASSETS.USDT, symbol: 'USDT', enabled: false });
    // This tenant's set was not cached yet: the change shows at once.
    expect(await symbols(api)).toEqual(['BTC', 'ETH', 'XRP']);
    const listed = await cli('tenant-assets', tenantId);
    expect(listed.items.find((i: { symbol: string }) => i.symbol === 'USDT')).toMatchObject({
      enabled: false,
    });
    await cli('enable-asset', tenantId, ASSETS.USDT);
    await waitFor(
      () => symbols(api),
      (s) => s.includes('USDT'),
    );
    const failure = await promisify(execFile)(process.execPath, [CLI, 'disable-asset', tenantId, 'DOGE'], {
      env: { ...process.env, ...h.env.env, LOG_LEVEL: 'error' },
    }).catch((err: { code: number; stdout: string }) => err);
    expect(failure).toMatchObject({ code: 1 });
    expect(JSON.parse((failure as { stdout: string }).stdout)).toMatchObject({
      status: 404,
      message: 'Asset not found',
    });
    // Five CLI processes, each booting Nest and TypeORM: slow on a loaded 2-core machine.
  }, 120_000);

  it('the CLI names a bad or missing setting in one JSON message, without a stack trace', async () => {
    const env = { PATH: process.env.PATH, SECRETS_MASTER_KEY: 'not-a-key' };
    const failure = await promisify(execFile)(process.execPath, [CLI, 'create-tenant', 'x'], { env }).catch(
      (err: { code: number; stdout: string; stderr: string }) => err,
    );
    expect(failure).toMatchObject({ code: 1 });
    const { stdout, stderr } = failure as { stdout: string; stderr: string };
    expect(JSON.parse(stdout).message).toMatch(
      /DATABASE_URL: .*\n.*SECRETS_MASTER_KEY: must be base64 of exactly 32 bytes/s,
    );
    expect(`${stdout}${stderr}`).not.toMatch(/\n\s+at /);
  });

  it('the scope preset "all" gives a key every scope of its environment; a wallet takes the asset symbol', async () => {
    const tenantId = await createTenant(h.api, 'Preset');
    const keyFor = (environment: string) =>
      admin(h.api).post(`/admin/tenants/${tenantId}/keys`, { environment, scopes: 'all' }).expect(201);
    const test = (await keyFor('test')).body;
    const live = (await keyFor('live')).body;
    expect([...test.scopes].sort()).toEqual([...SCOPES].sort());
    expect([...live.scopes].sort()).toEqual(SCOPES.filter((s) => !SANDBOX_ONLY_SCOPES.includes(s)).sort());

    const api = client(h.api, test);
    const vault = await api.post('/vaults', { externalId: 'preset', name: 'Preset' }).expect(201);
    const wallet = await api.post(`/vaults/${vault.body.id}/wallets`, { assetId: 'eth' }).expect(201);
    expect(wallet.body).toMatchObject({ assetId: ASSETS.ETH });
    await api.post(`/vaults/${vault.body.id}/wallets`, { assetId: 'DOGE' }).expect(400);
  });
  it('an asset disabled globally: existing wallets still read (balance, wallet, transactions) and receive; new moves, addresses, wallets and entries are 400', async () => {
    const { tenantId, api } = await tenantWithKey('Retired');
    const a = await fundedWallet(api, ASSETS.XRP, '5');
    const b = await fundedWallet(api, ASSETS.XRP, undefined);
    await api
      .post('/address-book', { assetId: ASSETS.XRP, address: XRP_BOOK, tag: '9', label: 'X' })
      .expect(201);
    // The migration-level switch, then a replica whose asset cache starts after it (it keeps assets 10 s).
    await sql(h, `UPDATE assets SET enabled = false WHERE id = $1`, [ASSETS.XRP]);
    const replica = await bootApp(
      AppModule.forRoot(loadEnv({ ...h.env.env, CUSTODY_RATE_LIMIT_PER_KEY: '100000' })),
      { rpc: false },
    );
    try {
      const onB = client(replica, await createKey(h.api, tenantId));
      expect(
        (await onB.get('/assets').expect(200)).body.items.map((x: { id: string }) => x.id),
      ).not.toContain(ASSETS.XRP);
      // Reading what exists stays allowed (decision 0203).
      expect((await onB.get(`/wallets/${a.walletId}/balance`).expect(200)).body).toMatchObject({
        assetSymbol: 'XRP',
        total: '5',
        available: '5',
      });
      await onB.get(`/wallets/${a.walletId}`).expect(200);
      await onB.get(`/transactions?walletId=${a.walletId}`).expect(200);
      // Nothing new: a transfer, a withdrawal, a deposit address.
      const refusal = (field: string) => ({
        message: 'Asset XRP is disabled',
        errors: { [field]: ['XRP is disabled: nothing new can be started with it'] },
      });
      const transfer = await onB.post(
        '/transactions/transfer',
        { sourceWalletId: a.walletId, destinationWalletId: b.walletId, amount: '1' },
        { 'idempotency-key': newIdempotencyKey() },
      );
      expect([transfer.status, transfer.body]).toEqual([400, refusal('sourceWalletId')]);
      const withdraw = await onB.post(
        '/transactions/withdraw',
        { sourceWalletId: a.walletId, destinationAddress: XRP_BOOK, destinationTag: '9', amount: '1' },
        { 'idempotency-key': newIdempotencyKey() },
      );
      expect([withdraw.status, withdraw.body]).toEqual([400, refusal('sourceWalletId')]);
      const address = await onB.post(`/wallets/${a.walletId}/addresses`);
      expect([address.status, address.body]).toEqual([400, refusal('walletId')]);
      // …nor a wallet or an address-book entry (an unknown asset to them: 400 on assetId).
      const vault = await onB.post('/vaults', { externalId: 'after-switch', name: 'V' }).expect(201);
      const unknown = { message: 'Unknown asset', errors: { assetId: ['Unknown or disabled asset'] } };
      const wallet = await onB.post(`/vaults/${vault.body.id}/wallets`, { assetId: ASSETS.XRP });
      expect([wallet.status, wallet.body]).toEqual([400, unknown]);
      const entry = await onB.post('/address-book', {
        assetId: ASSETS.XRP,
        address: XRP_BOOK,
        tag: '10',
        label: 'Y',
      });
      expect([entry.status, entry.body]).toEqual([400, unknown]);
      // Funds arriving on chain cannot be refused: an existing wallet is still credited.
      const dep = await onB.post('/sandbox/deposits', { walletId: b.walletId, amount: '0.5' }).expect(201);
      await waitFor(
        () => onB.get(`/transactions/${dep.body.transactionId}`).then((r) => r.body.status),
        (st) => st === 'Completed',
      );
      expect((await onB.get(`/wallets/${b.walletId}/balance`).expect(200)).body).toMatchObject({
        total: '0.5',
      });
      const [count] = await sql<{ n: number }>(
        h,
        `SELECT count(*)::int AS n FROM transactions WHERE tenant_id = $1 AND type <> 'Deposit'`,
        [tenantId],
      );
      expect(count.n).toBe(0);
    } finally {
      await sql(h, `UPDATE assets SET enabled = true WHERE id = $1`, [ASSETS.XRP]);
      await replica.close();
    }
  });

  it('a new deposit address for a wallet of an asset disabled for the tenant is 400 on walletId', async () => {
    const { tenantId, api } = await tenantWithKey('No new address');
    const w = await fundedWallet(api, ASSETS.BTC, undefined);
    await admin(h.api).post(`/admin/tenants/${tenantId}/assets/BTC/disable`).expect(200);
    const refused = await api.post(`/wallets/${w.walletId}/addresses`);
    expect([refused.status, refused.body]).toEqual([
      400,
      {
        message: 'Asset BTC is disabled for this tenant',
        errors: { walletId: ['BTC is disabled for this tenant'] },
      },
    ]);
    await admin(h.api).post(`/admin/tenants/${tenantId}/assets/BTC/enable`).expect(200);
    await api.post(`/wallets/${w.walletId}/addresses`).expect(201);
  });
});
