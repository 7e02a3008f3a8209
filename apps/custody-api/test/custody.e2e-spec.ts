import { transactionStatusUpdatedData } from '@tessera/contracts';
import * as bitcoin from 'bitcoinjs-lib';
import { getAddress } from 'ethers';
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

const BTC_TESTNET = 'tb1qw508d6qejxtdg4y5r3zarvary0c5xw7kxpjzsx';
const BTC_MAINNET = 'bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4';
const ETH_OK = '0x52908400098527886E0F7030069857D2E4169EE7';
const ETH_OTHER = '0x8617E340B3D01FA5F11F306F4090FD50E238070D';
const ETH_BAD_CHECKSUM = '0x52908400098527886E0F7030069857D2E4169Ee7';
const XRP_OK = 'rHb9CJAWyB4rj91VRWn96DkukG4bwdtyTh';
const FAILING_DESTINATION = '0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359';

let h: Harness;
let tenantId: string;
let api: Client;
let other: Client;

beforeAll(async () => {
  h = await startHarness({ CHAIN_SIM_FAIL_DESTINATIONS: FAILING_DESTINATION });
  tenantId = await createTenant(h.api, 'Main');
  api = client(h.api, await createKey(h.api, tenantId));
  other = client(h.api, await createKey(h.api, await createTenant(h.api, 'Other')));
});
afterAll(() => h?.close());

const outbox = (eventType: string, entityId?: string) =>
  sql<{ tenant_id: string; entity_type: string; entity_id: string; data: Record<string, unknown> }>(
    h,
    `SELECT tenant_id, entity_type, entity_id, data FROM outbox WHERE event_type = $1
     ${entityId ? 'AND entity_id = $2' : ''} ORDER BY created_at, occurred_at`,
    entityId ? [eventType, entityId] : [eventType],
  );

async function settle(id: string, status = 'Completed') {
  return waitFor(
    () => api.get(`/transactions/${id}`).then((r) => r.body),
    (t) => t.status === status,
  );
}

/**
 * The fields of a transaction that its create stores and nothing later changes (the machine moves status,
 * updatedAt, completedAt, txHash, fees and confirmations): what a GET must answer as the create did.
 */
const CHANGED_LATER = new Set([
  'status',
  'updatedAt',
  'completedAt',
  'txHash',
  'networkFee',
  'feeCurrency',
  'confirmations',
  'blockNumber',
  'blockHash',
  'failureReason',
  'pendingApprovals',
  'policyDecisions',
]);
function storedFields(t: Record<string, unknown>) {
  return Object.fromEntries(Object.entries(t).filter(([k]) => !CHANGED_LATER.has(k)));
}

describe('assets and vaults', () => {
  it('lists the seeded assets', async () => {
    const res = await api.get('/assets').expect(200);
    expect(res.body.items).toEqual(
      expect.arrayContaining([
        {
          id: ASSETS.BTC,
          symbol: 'BTC',
          network: 'bitcoin',
          decimals: 8,
          type: 'native',
          requiresTag: false,
          confirmations: 2,
        },
        {
          id: ASSETS.ETH,
          symbol: 'ETH',
          network: 'ethereum',
          decimals: 18,
          type: 'native',
          requiresTag: false,
          confirmations: 12,
        },
        {
          id: ASSETS.USDT,
          symbol: 'USDT',
          network: 'ethereum',
          decimals: 6,
          type: 'token',
          contractAddress: '0xdAC17F958D2ee523a2206206994597C13D831ec7',
          requiresTag: false,
          confirmations: 12,
        },
        {
          id: ASSETS.XRP,
          symbol: 'XRP',
          network: 'ripple',
          decimals: 6,
          type: 'native',
          requiresTag: true,
          confirmations: 1,
        },
      ]),
    );
  });

  it('creates, gets and lists vaults; a repeated externalId is 409 naming the existing id', async () => {
    const created = await api.post('/vaults', { externalId: 'cust-1', name: 'Customer 1' }).expect(201);
    expect(created.body).toEqual({
      id: expect.any(String),
      externalId: 'cust-1',
      name: 'Customer 1',
      status: 'Active',
      createdAt: expect.any(String),
    });
    const dup = await api.post('/vaults', { externalId: 'cust-1', name: 'Again' }).expect(409);
    expect(dup.body.message).toContain(created.body.id);
    await api.get(`/vaults/${created.body.id}`).expect(200);
    const list = await api.get('/vaults').expect(200);
    expect(list.body.items.map((v: { id: string }) => v.id)).toContain(created.body.id);
    await other.get(`/vaults/${created.body.id}`).expect(404);
    const invalid = await api.post('/vaults', { name: '' }).expect(400);
    expect(Object.keys(invalid.body.errors).sort()).toEqual(['externalId', 'name']);
  });
});

describe('wallets and deposit addresses', () => {
  it('derives real addresses per network, emits wallet.created, refuses a second wallet of one asset', async () => {
    const vault = await api.post('/vaults', { externalId: 'addr-1', name: 'A' }).expect(201);
    const make = (assetId: string) => api.post(`/vaults/${vault.body.id}/wallets`, { assetId, label: 'x' });
    const btc = (await make(ASSETS.BTC).expect(201)).body;
    const eth = (await make(ASSETS.ETH).expect(201)).body;
    const usdt = (await make(ASSETS.USDT).expect(201)).body;
    const xrp = (await make(ASSETS.XRP).expect(201)).body;
    expect(btc).toEqual({
      walletId: expect.any(String),
      vaultId: vault.body.id,
      assetId: ASSETS.BTC,
      label: 'x',
      depositAddress: expect.stringMatching(/^tb1q[02-9ac-hj-np-z]{38}$/),
      depositTag: null,
      status: 'Active',
      createdAt: expect.any(String),
    });
    expect(() => bitcoin.address.toOutputScript(btc.depositAddress, bitcoin.networks.testnet)).not.toThrow();
    expect(getAddress(eth.depositAddress)).toBe(eth.depositAddress);
    expect(eth.depositAddress).toMatch(/[A-F]/);
    expect(getAddress(usdt.depositAddress)).toBe(usdt.depositAddress);
    expect(xrp.depositAddress).toMatch(/^r[1-9A-HJ-NP-Za-km-z]{24,34}$/);
    expect(xrp.depositTag).toMatch(/^\d+$/);
    await make(ASSETS.BTC).expect(409);
    const [event] = await outbox('wallet.created', btc.walletId);
    expect(event).toEqual({ tenant_id: tenantId, entity_type: 'wallet', entity_id: btc.walletId, data: btc });
    const extra = await api.post(`/wallets/${btc.walletId}/addresses`).expect(201);
    expect(extra.body.address).not.toBe(btc.depositAddress);
    const detail = await api.get(`/wallets/${btc.walletId}`).expect(200);
    expect(detail.body.addresses).toHaveLength(2);
    const list = await api.get(`/vaults/${vault.body.id}/wallets`).expect(200);
    expect(list.body.items).toHaveLength(4);
    await other.get(`/wallets/${btc.walletId}`).expect(404);
    await other.get(`/wallets/${btc.walletId}/balance`).expect(404);
    // Seeds stay encrypted at rest.
    const [tenant] = await sql<{ hd_seed_sealed: string }>(
      h,
      'SELECT hd_seed_sealed FROM tenants WHERE id = $1',
      [tenantId],
    );
    expect(tenant.hd_seed_sealed).toMatch(/^v1\./);
  });

  it('an unknown or disabled asset in the body is 400 on assetId (404 stays for the path); any case of an asset id', async () => {
    const vault = await api.post('/vaults', { externalId: 'assets-1', name: 'A' }).expect(201);
    for (const assetId of ['nope', 'a0000000-0000-4000-8000-00000000dead']) {
      const res = await api.post(`/vaults/${vault.body.id}/wallets`, { assetId }).expect(400);
      expect(res.body).toEqual({
        message: 'Unknown asset',
        errors: { assetId: ['Unknown or disabled asset'] },
      });
    }
    await api
      .post('/vaults/00000000-0000-4000-8000-000000000000/wallets', { assetId: ASSETS.BTC })
      .expect(404);
    const upper = ASSETS.ETH.toUpperCase();
    const wallet = await api.post(`/vaults/${vault.body.id}/wallets`, { assetId: upper }).expect(201);
    expect(wallet.body.assetId).toBe(ASSETS.ETH);
    const entry = await api
      .post('/address-book', { assetId: upper, address: ETH_OK, label: 'Upper id' })
      .expect(201);
    expect(entry.body.assetId).toBe(ASSETS.ETH);
    const listed = await api.get(`/address-book?assetId=${upper}`).expect(200);
    expect(listed.body.items.map((e: { id: string }) => e.id)).toContain(entry.body.id);
    // By symbol too, as wallets take it (the quick start's address-book entry); an unknown one is the same 400.
    const bySymbol = await api
      .post('/address-book', { assetId: 'eth', address: ETH_OTHER, label: 'By symbol' })
      .expect(201);
    expect(bySymbol.body.assetId).toBe(ASSETS.ETH);
    const unknown = await api
      .post('/address-book', { assetId: 'NOPE', address: ETH_OTHER, label: 'Unknown' })
      .expect(400);
    expect(unknown.body.errors).toEqual({ assetId: ['Unknown or disabled asset'] });
    // One entry per destination (decision 0475): the address-book tests below add these addresses again.
    await api.delete(`/address-book/${entry.body.id}`).expect(204);
    await api.delete(`/address-book/${bySymbol.body.id}`).expect(204);
  });

  it('live keys get mainnet addresses', async () => {
    const live = client(h.api, await createKey(h.api, tenantId, { environment: 'live' }));
    const vault = await live.post('/vaults', { externalId: 'live-1', name: 'L' }).expect(201);
    const btc = await live.post(`/vaults/${vault.body.id}/wallets`, { assetId: ASSETS.BTC }).expect(201);
    expect(btc.body.depositAddress).toMatch(/^bc1q/);
  });
});

/**
 * The destination in the tenant's book: added, or already there from an earlier test (one entry per destination,
 * decision 0475).
 */
async function inBook(assetId: string, address: string): Promise<void> {
  const res = await api.post('/address-book', { assetId, address, label: 'Destination' });
  expect([201, 409]).toContain(res.status);
}

describe('address book', () => {
  it('validates per network with checksums, lists with an assetId filter, deletes, and emits changes', async () => {
    const bad = await api.post('/address-book', {
      assetId: ASSETS.ETH,
      address: ETH_BAD_CHECKSUM,
      label: 'x',
    });
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual({
      message: 'Not a valid Ethereum address (EIP-55 checksum)',
      errors: { address: ['Not a valid Ethereum address (EIP-55 checksum)'] },
    });
    await api.post('/address-book', { assetId: ASSETS.BTC, address: BTC_MAINNET, label: 'x' }).expect(400);
    await api
      .post('/address-book', {
        assetId: ASSETS.XRP,
        address: 'rHb9CJAWyB4rj91VRWn96DkukG4bwdtyTx',
        label: 'x',
      })
      .expect(400);
    const btc = await api
      .post('/address-book', { assetId: ASSETS.BTC, address: BTC_TESTNET, label: 'Cold' })
      .expect(201);
    const eth = await api
      .post('/address-book', { assetId: ASSETS.ETH, address: ETH_OK.toLowerCase(), label: 'Exchange' })
      .expect(201);
    expect(eth.body.address).toBe(ETH_OK);
    await api
      .post('/address-book', { assetId: ASSETS.XRP, address: XRP_OK, tag: '123', label: 'X' })
      .expect(201);
    const filtered = await api.get(`/address-book?assetId=${ASSETS.BTC}`).expect(200);
    expect(filtered.body.items.map((e: { id: string }) => e.id)).toEqual([btc.body.id]);
    // The filter takes the asset as POST does, by symbol too; an unknown symbol is a 400, an unknown id lists none.
    const bySymbol = await api.get('/address-book?assetId=btc').expect(200);
    expect(bySymbol.body.items.map((e: { id: string }) => e.id)).toEqual([btc.body.id]);
    const unknown = await api.get('/address-book?assetId=DOGE').expect(400);
    expect(unknown.body.errors).toEqual({ assetId: ['Unknown asset: give its id or its symbol'] });
    const none = await api.get('/address-book?assetId=00000000-0000-4000-8000-000000000000').expect(200);
    expect(none.body.items).toEqual([]);
    await api.get(`/address-book/${btc.body.id}`).expect(200);
    await other.get(`/address-book/${btc.body.id}`).expect(404);
    await other.delete(`/address-book/${btc.body.id}`).expect(404);
    await api.delete(`/address-book/${btc.body.id}`).expect(204);
    await api.get(`/address-book/${btc.body.id}`).expect(404);
    const events = await outbox('address-book.changed', btc.body.id);
    expect(events.map((e) => e.data.action)).toEqual(['created', 'deleted']);
    expect(events[0].entity_type).toBe('address-book');
  });
});

describe('issue 15: tags and strict amounts', () => {
  it('an asset with requiresTag needs a valid tag in the address book and in withdrawals', async () => {
    const noTag = await api.post('/address-book', { assetId: ASSETS.XRP, address: XRP_OK, label: 'no tag' });
    expect(noTag.status).toBe(400);
    expect(noTag.body).toEqual({
      message: 'XRP addresses need a destination tag',
      errors: { tag: ['Required for this asset'] },
    });
    const badTag = await api.post('/address-book', {
      assetId: ASSETS.XRP,
      address: XRP_OK,
      tag: '4294967296',
      label: 'x',
    });
    expect(badTag.status).toBe(400);
    expect(badTag.body.errors).toEqual({ tag: ['Destination tag must be an integer 0..4294967295'] });
    await api
      .post('/address-book', { assetId: ASSETS.XRP, address: XRP_OK, tag: '77', label: 'tagged' })
      .expect(201);
    const xrp = await fundedWallet(api, ASSETS.XRP, '5');
    const withdraw = (body: Record<string, unknown>) =>
      api.post(
        '/transactions/withdraw',
        { sourceWalletId: xrp.walletId, destinationAddress: XRP_OK, amount: '1', ...body },
        { 'idempotency-key': newIdempotencyKey() },
      );
    const untagged = await withdraw({});
    expect(untagged.status).toBe(400);
    expect(untagged.body).toEqual({
      message: 'XRP withdrawals need a destination tag',
      errors: { destinationTag: ['Required for this asset'] },
    });
    expect((await withdraw({ destinationTag: '78' })).status).toBe(400);
    const tagged77 = await withdraw({ destinationTag: '77' });
    expect(tagged77.status).toBe(201);
    // The tag is stored: GET answers it as the create did.
    const read77 = await api.get(`/transactions/${tagged77.body.transactionId}`).expect(200);
    expect(storedFields(read77.body)).toEqual(storedFields(tagged77.body));
    expect(read77.body.destinationTag).toBe('77');
    const btc = await fundedWallet(api, ASSETS.BTC, '1');
    const tagged = await api.post(
      '/transactions/withdraw',
      { sourceWalletId: btc.walletId, destinationAddress: BTC_TESTNET, destinationTag: '1', amount: '0.1' },
      { 'idempotency-key': newIdempotencyKey() },
    );
    expect(tagged.status).toBe(400);
    expect(tagged.body.errors).toEqual({ destinationTag: ['This asset takes no tag'] });
  });

  it.each(['  0.1', '0.1\n', '\t0.1', '000.1', '0.1 ', '1e-1', '.1'])(
    'refuses the lenient amount %j with 400 and creates nothing',
    async (amount) => {
      const a = await fundedWallet(api, ASSETS.BTC, '1');
      const b = await fundedWallet(api, ASSETS.BTC, undefined);
      const res = await api.post(
        '/transactions/transfer',
        { sourceWalletId: a.walletId, destinationWalletId: b.walletId, amount },
        { 'idempotency-key': newIdempotencyKey() },
      );
      expect(res.status).toBe(400);
      expect(res.body.errors.amount).toEqual([
        'Must be a decimal string such as "1.25" (no sign, spaces or leading zeros)',
      ]);
      expect((await api.get(`/wallets/${a.walletId}/balance`)).body).toMatchObject({ available: '1' });
    },
  );
});

describe('transfers and withdrawals', () => {
  it('an internal transfer moves both balances at once and runs the machine to Completed', async () => {
    const a = await fundedWallet(api, ASSETS.BTC, '2');
    const b = await fundedWallet(api, ASSETS.BTC, undefined);
    const res = await api
      .post(
        '/transactions/transfer',
        { sourceWalletId: a.walletId, destinationWalletId: b.walletId, amount: '0.5', note: 'rebalance' },
        { 'idempotency-key': newIdempotencyKey() },
      )
      .expect(201);
    expect(res.body).toMatchObject({
      type: 'InternalTransfer',
      status: 'Submitted',
      amount: '0.5',
      sourceWalletId: a.walletId,
      destinationWalletId: b.walletId,
      sourceAddress: a.depositAddress,
      destinationAddress: b.depositAddress,
      note: 'rebalance',
      txHash: null,
    });
    expect((await api.get(`/wallets/${a.walletId}/balance`)).body).toMatchObject({
      total: '1.5',
      available: '1.5',
    });
    expect((await api.get(`/wallets/${b.walletId}/balance`)).body).toMatchObject({
      total: '0.5',
      available: '0.5',
    });
    const done = await settle(res.body.transactionId);
    expect(done.completedAt).toEqual(expect.any(String));
    const statuses = await outbox('transaction.status.updated', res.body.transactionId);
    expect(statuses.map((e) => [e.data.previousStatus, e.data.status])).toEqual([
      ['Submitted', 'PendingSignature'],
      ['PendingSignature', 'Broadcasting'],
      ['Broadcasting', 'Confirming'],
      ['Confirming', 'Completed'],
    ]);
    const [created] = await outbox('transaction.created', res.body.transactionId);
    expect(created.data).toEqual({
      transactionId: res.body.transactionId,
      type: 'InternalTransfer',
      status: 'Submitted',
      vaultId: a.vaultId,
      vaultExternalId: expect.any(String),
      vaultName: 'Vault',
      assetId: ASSETS.BTC,
      assetSymbol: 'BTC',
      assetNetwork: 'bitcoin',
      sourceWalletId: a.walletId,
      destinationWalletId: b.walletId,
      amount: '0.5',
      sourceAddress: a.depositAddress,
      destinationAddress: b.depositAddress,
      destinationTag: null,
      txHash: null,
      networkFee: null,
      feeCurrency: null,
      amountUSD: null,
      feeUSD: null,
      note: 'rebalance',
      createdAt: res.body.createdAt,
    });
    const balanceEvents = await outbox('balance.updated', `${b.vaultId}:${ASSETS.BTC}`);
    expect(balanceEvents[0]).toMatchObject({
      entity_type: 'balance',
      data: { vaultAccountId: b.vaultId, assetId: ASSETS.BTC },
    });
    expect(Object.keys(balanceEvents[0].data).sort()).toEqual(['assetId', 'vaultAccountId']);
  });

  it('a withdrawal holds at Submitted, posts at Completed with txHash, completedAt and events', async () => {
    const a = await fundedWallet(api, ASSETS.ETH, '3');
    await inBook(ASSETS.ETH, ETH_OK);
    const res = await api
      .post(
        '/transactions/withdraw',
        { sourceWalletId: a.walletId, destinationAddress: ETH_OK, amount: '1.25' },
        { 'idempotency-key': newIdempotencyKey() },
      )
      .expect(201);
    expect(res.body).toMatchObject({ type: 'Withdrawal', status: 'Submitted', destinationAddress: ETH_OK });
    expect((await api.get(`/wallets/${a.walletId}/balance`)).body).toMatchObject({
      total: '3',
      available: '1.75',
      locked: '1.25',
      pending: '0',
    });
    const done = await settle(res.body.transactionId);
    expect(done.txHash).toMatch(/^0x[0-9a-f]{64}$/);
    expect((await api.get(`/wallets/${a.walletId}/balance`)).body).toMatchObject({
      total: '1.75',
      available: '1.75',
      locked: '0',
    });
    const statuses = await outbox('transaction.status.updated', res.body.transactionId);
    const last = statuses[statuses.length - 1].data;
    // The catalog schema pins the contract's field list (libs/contracts webhooks-catalog.spec.ts); the event
    // must carry exactly those fields, with their types.
    expect(Object.keys(last).sort()).toEqual(Object.keys(transactionStatusUpdatedData.shape).sort());
    expect(() => transactionStatusUpdatedData.strict().parse(last)).not.toThrow();
    expect(last).toMatchObject({
      status: 'Completed',
      previousStatus: 'Confirming',
      completedAt: done.completedAt,
    });
  });

  it('a failed broadcast releases the hold and reports failureReason', async () => {
    const a = await fundedWallet(api, ASSETS.ETH, '1');
    await api
      .post('/address-book', { assetId: ASSETS.ETH, address: FAILING_DESTINATION, label: 'F' })
      .expect(201);
    const res = await api
      .post(
        '/transactions/withdraw',
        { sourceWalletId: a.walletId, destinationAddress: FAILING_DESTINATION, amount: '0.4' },
        { 'idempotency-key': newIdempotencyKey() },
      )
      .expect(201);
    const failed = await settle(res.body.transactionId, 'Failed');
    expect(failed.failureReason).toBe('Simulated broadcast rejection by the network');
    expect(failed.completedAt).toEqual(expect.any(String));
    expect((await api.get(`/wallets/${a.walletId}/balance`)).body).toMatchObject({
      total: '1',
      available: '1',
      locked: '0',
    });
    const events = await outbox('transaction.status.updated', res.body.transactionId);
    expect(events[events.length - 1].data).toMatchObject({
      status: 'Failed',
      previousStatus: 'PendingSignature',
      failureReason: 'Simulated broadcast rejection by the network',
    });
  });

  it('a sandbox deposit is pending until Completed, then credited', async () => {
    const w = await fundedWallet(api, ASSETS.XRP, undefined);
    const dep = await api.post('/sandbox/deposits', { walletId: w.walletId, amount: '10.5' }).expect(201);
    expect(dep.body).toMatchObject({ type: 'Deposit', sourceWalletId: null, destinationWalletId: null });
    expect(dep.body.destinationTag).toMatch(/^\d+$/);
    await settle(dep.body.transactionId);
    expect((await api.get(`/wallets/${w.walletId}/balance`)).body).toMatchObject({
      total: '10.5',
      available: '10.5',
      pending: '0',
      assetSymbol: 'XRP',
    });
  });

  it('400 with errors and nothing created: insufficient, too many decimals, non-positive, asset or tenant mismatch', async () => {
    const a = await fundedWallet(api, ASSETS.BTC, '1');
    const eth = await fundedWallet(api, ASSETS.ETH, undefined);
    const foreign = await fundedWallet(other, ASSETS.BTC, undefined);
    const before = await sql(h, 'SELECT count(*)::int AS n FROM transactions');
    const transfer = (body: Record<string, unknown>) =>
      api.post('/transactions/transfer', body, { 'idempotency-key': newIdempotencyKey() });
    const cases: [Record<string, unknown>, string][] = [
      [
        { sourceWalletId: a.walletId, destinationWalletId: eth.walletId, amount: '0.1' },
        'destinationWalletId',
      ],
      [
        { sourceWalletId: a.walletId, destinationWalletId: foreign.walletId, amount: '0.1' },
        'destinationWalletId',
      ],
      [
        { sourceWalletId: foreign.walletId, destinationWalletId: a.walletId, amount: '0.1' },
        'sourceWalletId',
      ],
    ];
    const b = await fundedWallet(api, ASSETS.BTC, undefined);
    for (const amount of ['2', '0.000000001', '0', '-1', 'abc']) {
      cases.push([{ sourceWalletId: a.walletId, destinationWalletId: b.walletId, amount }, 'amount']);
    }
    for (const [body, field] of cases) {
      const res = await transfer(body);
      expect(res.status).toBe(400);
      expect(Object.keys(res.body.errors)).toEqual([field]);
    }
    const after = await sql(h, 'SELECT count(*)::int AS n FROM transactions');
    expect(after).toEqual(before);
    expect((await api.get(`/wallets/${a.walletId}/balance`)).body).toMatchObject({ available: '1' });
  });

  it('an amount the ledger could not hold (numeric(78,0)) is 400 on amount for deposits, transfers and withdrawals', async () => {
    const a = await fundedWallet(api, ASSETS.ETH, '1');
    const b = await fundedWallet(api, ASSETS.ETH, undefined);
    await inBook(ASSETS.ETH, ETH_OK);
    const before = await sql(h, 'SELECT count(*)::int AS n FROM transactions');
    const huge = `1${'0'.repeat(90)}`;
    const tooLarge = {
      message: 'amount: Too large: at most 30 digits before the decimal point',
      errors: { amount: ['Too large: at most 30 digits before the decimal point'] },
    };
    for (const amount of [huge, `1${'0'.repeat(30)}`, `${'9'.repeat(60)}.1`]) {
      const deposit = await api.post('/sandbox/deposits', { walletId: b.walletId, amount });
      expect([deposit.status, deposit.body]).toEqual([400, tooLarge]);
      const transfer = await api.post(
        '/transactions/transfer',
        { sourceWalletId: a.walletId, destinationWalletId: b.walletId, amount },
        { 'idempotency-key': newIdempotencyKey() },
      );
      expect([transfer.status, transfer.body]).toEqual([400, tooLarge]);
      const withdraw = await api.post(
        '/transactions/withdraw',
        { sourceWalletId: a.walletId, destinationAddress: ETH_OK, amount },
        { 'idempotency-key': newIdempotencyKey() },
      );
      expect([withdraw.status, withdraw.body]).toEqual([400, tooLarge]);
    }
    expect(await sql(h, 'SELECT count(*)::int AS n FROM transactions')).toEqual(before);
    // 30 digits is still an amount (refused here for the funds, not its size).
    const largest = await api.post(
      '/transactions/transfer',
      { sourceWalletId: a.walletId, destinationWalletId: b.walletId, amount: '9'.repeat(30) },
      { 'idempotency-key': newIdempotencyKey() },
    );
    expect([largest.status, largest.body.errors]).toEqual([
      400,
      { amount: ['Exceeds the available balance'] },
    ]);
  });

  it('a withdrawal to a destination not in the address book is 400, and its Idempotency-Key stays free', async () => {
    const a = await fundedWallet(api, ASSETS.BTC, '1');
    const destinationAddress = 'tb1qrp33g0q5c5txsp9arysrx4k6zdkfs4nce4xj0gdcccefvpysxf3q0sl5k7';
    const key = newIdempotencyKey();
    const withdraw = () =>
      api.post(
        '/transactions/withdraw',
        { sourceWalletId: a.walletId, destinationAddress, amount: '0.1' },
        { 'idempotency-key': key },
      );
    const res = await withdraw().expect(400);
    expect(res.body).toEqual({
      message: 'Destination address is not in the address book',
      errors: { destinationAddress: ['Add this address to the address book for this asset first'] },
    });
    // The refusal (decided inside the write, after the key was claimed) reserved nothing: the same key, once
    // the entry exists, creates the withdrawal.
    await api
      .post('/address-book', { assetId: ASSETS.BTC, address: destinationAddress, label: 'Later' })
      .expect(201);
    await withdraw().expect(201);
  });

  it('Idempotency-Key: required, well-formed, same body replays, different body 400', async () => {
    const a = await fundedWallet(api, ASSETS.BTC, '1');
    const b = await fundedWallet(api, ASSETS.BTC, undefined);
    const body = { sourceWalletId: a.walletId, destinationWalletId: b.walletId, amount: '0.1' };
    const missing = await api.post('/transactions/transfer', body).expect(400);
    expect(Object.keys(missing.body.errors)).toEqual(['Idempotency-Key']);
    await api.post('/transactions/transfer', body, { 'idempotency-key': 'x'.repeat(65) }).expect(400);
    await api.post('/transactions/transfer', body, { 'idempotency-key': 'bad key!' }).expect(400);
    const key = newIdempotencyKey();
    const first = await api.post('/transactions/transfer', body, { 'idempotency-key': key }).expect(201);
    const again = await api.post('/transactions/transfer', body, { 'idempotency-key': key }).expect(201);
    expect(again.body).toEqual(first.body);
    const mismatch = await api
      .post('/transactions/transfer', { ...body, amount: '0.2' }, { 'idempotency-key': key })
      .expect(400);
    expect(mismatch.body.message).toBe('Idempotency-Key was already used with a different request body');
    // Keys are per endpoint and per tenant.
    await inBook(ASSETS.BTC, BTC_TESTNET);
    await api
      .post(
        '/transactions/withdraw',
        { sourceWalletId: a.walletId, destinationAddress: BTC_TESTNET, amount: '0.1' },
        { 'idempotency-key': key },
      )
      .expect(201);
    expect((await api.get(`/wallets/${a.walletId}/balance`)).body).toMatchObject({
      total: '0.9',
      available: '0.8',
    });
    // Another tenant's request under the same key is its own: a transaction of its own, not this tenant's answer.
    const c = await fundedWallet(other, ASSETS.BTC, '1');
    const d = await fundedWallet(other, ASSETS.BTC, undefined);
    const theirs = await other
      .post(
        '/transactions/transfer',
        { sourceWalletId: c.walletId, destinationWalletId: d.walletId, amount: '0.1' },
        { 'idempotency-key': key },
      )
      .expect(201);
    expect(theirs.body.transactionId).not.toBe(first.body.transactionId);
    expect(theirs.body.sourceWalletId).toBe(c.walletId);
    expect((await other.get(`/wallets/${c.walletId}/balance`)).body).toMatchObject({ total: '0.9' });
  });

  it('Idempotency-Key: a request refused for insufficient balance reserves nothing; the key works once funded', async () => {
    const a = await fundedWallet(api, ASSETS.BTC, undefined);
    const b = await fundedWallet(api, ASSETS.BTC, undefined);
    const body = { sourceWalletId: a.walletId, destinationWalletId: b.walletId, amount: '0.5' };
    const key = newIdempotencyKey();
    await api.post('/transactions/transfer', body, { 'idempotency-key': key }).expect(400);
    const dep = await api.post('/sandbox/deposits', { walletId: a.walletId, amount: '1' }).expect(201);
    await waitFor(
      () => api.get(`/transactions/${dep.body.transactionId}`).then((r) => r.body.status),
      (st) => st === 'Completed',
    );
    const retried = await api.post('/transactions/transfer', body, { 'idempotency-key': key }).expect(201);
    expect(retried.body.amount).toBe('0.5');
    expect((await api.get(`/wallets/${a.walletId}/balance`)).body).toMatchObject({ available: '0.5' });
  });

  it('Idempotency-Key: a replay answers the original response even when its checks would now refuse it', async () => {
    // A withdrawal to an address-book entry, then the entry deleted: the replay is not "not in the address book".
    const w = await fundedWallet(api, ASSETS.BTC, '1');
    // An address no other test puts in the book: a fresh wallet's deposit address.
    const { depositAddress } = await fundedWallet(api, ASSETS.BTC, undefined);
    const entry = await api
      .post('/address-book', { assetId: ASSETS.BTC, address: depositAddress, label: 'replayed' })
      .expect(201);
    const withdrawal = { sourceWalletId: w.walletId, destinationAddress: depositAddress, amount: '0.1' };
    const wKey = newIdempotencyKey();
    const first = await api
      .post('/transactions/withdraw', withdrawal, { 'idempotency-key': wKey })
      .expect(201);
    await api.delete(`/address-book/${entry.body.id}`).expect(204);
    const replay = await api
      .post('/transactions/withdraw', withdrawal, { 'idempotency-key': wKey })
      .expect(201);
    expect(replay.body).toEqual(first.body);
    // Another body under the key is still the mismatch, and a new key is refused by the check as before.
    const other = await api
      .post('/transactions/withdraw', { ...withdrawal, amount: '0.2' }, { 'idempotency-key': wKey })
      .expect(400);
    expect(other.body.errors).toHaveProperty('Idempotency-Key');
    const fresh = await api
      .post('/transactions/withdraw', withdrawal, { 'idempotency-key': newIdempotencyKey() })
      .expect(400);
    expect(fresh.body.errors).toHaveProperty('destinationAddress');

    // A transfer, then its asset disabled for the tenant by the operator: the replay still answers the original.
    const own = client(h.api, await createKey(h.api, tenantId));
    const a = await fundedWallet(own, ASSETS.USDT, '1');
    const b = await fundedWallet(own, ASSETS.USDT, undefined);
    const transfer = { sourceWalletId: a.walletId, destinationWalletId: b.walletId, amount: '0.1' };
    const tKey = newIdempotencyKey();
    const created = await own
      .post('/transactions/transfer', transfer, { 'idempotency-key': tKey })
      .expect(201);
    await admin(h.api).post(`/admin/tenants/${tenantId}/assets/${ASSETS.USDT}/disable`).expect(200);
    try {
      const again = await own
        .post('/transactions/transfer', transfer, { 'idempotency-key': tKey })
        .expect(201);
      expect(again.body).toEqual(created.body);
      await own
        .post('/transactions/transfer', transfer, { 'idempotency-key': newIdempotencyKey() })
        .expect(400);
    } finally {
      await admin(h.api).post(`/admin/tenants/${tenantId}/assets/${ASSETS.USDT}/enable`).expect(200);
    }
    expect((await own.get(`/wallets/${a.walletId}/balance`)).body).toMatchObject({ total: '0.9' });
  });

  it('Idempotency-Key: after 24 hours the key is a new request', async () => {
    const a = await fundedWallet(api, ASSETS.BTC, '1');
    const b = await fundedWallet(api, ASSETS.BTC, undefined);
    const body = { sourceWalletId: a.walletId, destinationWalletId: b.walletId, amount: '0.1' };
    const key = newIdempotencyKey();
    const first = await api.post('/transactions/transfer', body, { 'idempotency-key': key }).expect(201);
    await sql(
      h,
      `UPDATE idempotency_keys SET created_at = now() - interval '24 hours 1 minute' WHERE key = $1`,
      [key],
    );
    // Past the cache: a different body is no mismatch, and the same key creates a second transaction.
    const second = await api
      .post('/transactions/transfer', { ...body, amount: '0.2' }, { 'idempotency-key': key })
      .expect(201);
    expect(second.body.transactionId).not.toBe(first.body.transactionId);
    const replay = await api
      .post('/transactions/transfer', { ...body, amount: '0.2' }, { 'idempotency-key': key })
      .expect(201);
    expect(replay.body).toEqual(second.body);
    expect((await api.get(`/wallets/${a.walletId}/balance`)).body).toMatchObject({ total: '0.7' });
  });
});

describe('reading transactions', () => {
  it('GET /transactions/{id} answers every stored field as the create did', async () => {
    const a = await fundedWallet(api, ASSETS.USDT, '10');
    const b = await fundedWallet(api, ASSETS.USDT, undefined);
    const created = await api
      .post(
        '/transactions/transfer',
        { sourceWalletId: a.walletId, destinationWalletId: b.walletId, amount: '1.25', note: 'rent, May' },
        { 'idempotency-key': newIdempotencyKey() },
      )
      .expect(201);
    const read = await api.get(`/transactions/${created.body.transactionId}`).expect(200);
    expect(storedFields(read.body)).toEqual(storedFields(created.body));
    expect(read.body).toMatchObject({ note: 'rent, May', amount: '1.25', sourceWalletId: a.walletId });
  });

  it('cursor pages skip nothing created in the same millisecond (vaults and transactions)', async () => {
    // Postgres keeps microseconds; a cursor cut to milliseconds skipped the rows of the same millisecond.
    const own = client(h.api, await createKey(h.api, await createTenant(h.api, 'Same millisecond')));
    const micros = ['123100', '123400', '123700', '123900'];
    const vaults: string[] = [];
    for (let i = 0; i < micros.length; i++)
      vaults.push(
        (await own.post('/vaults', { externalId: `ms-${i}`, name: `ms ${i}` }).expect(201)).body.id,
      );
    const wallet = (await own.post(`/vaults/${vaults[0]}/wallets`, { assetId: ASSETS.BTC }).expect(201)).body;
    const deposits: string[] = [];
    for (let i = 0; i < micros.length; i++)
      deposits.push(
        (await own.post('/sandbox/deposits', { walletId: wallet.walletId, amount: '0.1' }).expect(201)).body
          .transactionId,
      );
    for (const [table, ids] of [
      ['vaults', vaults],
      ['transactions', deposits],
    ] as const)
      for (let i = 0; i < ids.length; i++)
        await sql(h, `UPDATE ${table} SET created_at = $2::timestamptz WHERE id = $1`, [
          ids[i],
          `2026-01-01T00:00:00.${micros[i]}Z`,
        ]);
    const pageThrough = async (path: string, idOf: (item: Record<string, string>) => string) => {
      const seen: string[] = [];
      let cursor: string | null = null;
      do {
        const page: { items: Record<string, string>[]; nextCursor: string | null } = (
          await own.get(`${path}${cursor ? `&cursor=${cursor}` : ''}`).expect(200)
        ).body;
        seen.push(...page.items.map(idOf));
        cursor = page.nextCursor;
      } while (cursor && seen.length < 20);
      return seen;
    };
    expect(await pageThrough('/vaults?take=1', (v) => v.id!)).toEqual([...vaults].reverse());
    expect(await pageThrough('/transactions?take=1&type=Deposit', (t) => t.transactionId!)).toEqual(
      [...deposits].reverse(),
    );
    // A cursor naming another tenant's row is placed by its own time: that row is not read.
    const foreign = (await other.post('/vaults', { externalId: 'ms-foreign', name: 'x' }).expect(201)).body
      .id;
    await sql(h, `UPDATE vaults SET created_at = '2025-01-01T00:00:00Z' WHERE id = $1`, [foreign]);
    const forged = Buffer.from(`2100-01-01T00:00:00.000Z|${foreign}`).toString('base64url');
    expect((await own.get(`/vaults?take=10&cursor=${forged}`).expect(200)).body.items).toHaveLength(4);
  });

  it('cursors (0484): one past either end is a normal page; one the service cannot have issued is 400 naming cursor', async () => {
    await fundedWallet(api, ASSETS.USDT, '1', 'cursor-ends');
    const cursor = (text: string) => Buffer.from(text).toString('base64url');
    for (const list of ['/vaults', '/transactions']) {
      const first = (await api.get(`${list}?take=5`).expect(200)).body;
      expect(first.items.length).toBeGreaterThan(0);
      // Older than every row: the page after the last one.
      const oldest = cursor('1970-01-01T00:00:00.000Z|00000000-0000-0000-0000-000000000000');
      expect((await api.get(`${list}?take=5&cursor=${oldest}`).expect(200)).body).toEqual({
        items: [],
        nextCursor: null,
      });
      // Newer than every row: the first page.
      const newest = cursor('9999-12-31T23:59:59.999Z|ffffffff-ffff-ffff-ffff-ffffffffffff');
      expect((await api.get(`${list}?take=5&cursor=${newest}`).expect(200)).body).toEqual(first);
      // Year 0 parses in JavaScript but is no time Postgres stores: the cursor's own 400, not a generic one.
      for (const never of ['0000-01-01T00:00:00.000Z', '+275760-09-13T00:00:00.000Z']) {
        const bad = await api
          .get(`${list}?cursor=${cursor(`${never}|00000000-0000-0000-0000-000000000000`)}`)
          .expect(400);
        expect(bad.body.errors).toEqual({ cursor: ['Invalid cursor'] });
      }
    }
  });

  it('GET /transactions: default 20, cursor pages in createdAt desc, filters, 400 above 200, 404 across tenants', async () => {
    const a = await fundedWallet(api, ASSETS.USDT, '100');
    const b = await fundedWallet(api, ASSETS.USDT, undefined);
    for (let i = 0; i < 25; i++) {
      await api
        .post(
          '/transactions/transfer',
          { sourceWalletId: a.walletId, destinationWalletId: b.walletId, amount: `0.${i + 1}` },
          { 'idempotency-key': newIdempotencyKey() },
        )
        .expect(201);
    }
    const first = await api.get(`/transactions?walletId=${b.walletId}`).expect(200);
    expect(first.body.items).toHaveLength(20);
    expect(first.body.nextCursor).toEqual(expect.any(String));
    const second = await api
      .get(`/transactions?walletId=${b.walletId}&cursor=${first.body.nextCursor}`)
      .expect(200);
    expect(second.body.items).toHaveLength(5);
    expect(second.body.nextCursor).toBeNull();
    const all = [...first.body.items, ...second.body.items];
    expect(new Set(all.map((t) => t.transactionId)).size).toBe(25);
    const times = all.map((t) => Date.parse(t.createdAt));
    expect([...times].sort((x, y) => y - x)).toEqual(times);
    const deposits = await api.get(`/transactions?type=Deposit&vaultId=${a.vaultId}`).expect(200);
    expect(deposits.body.items).toHaveLength(1);
    // vaultId lists what moves the vault's balances, as walletId does the wallet's: the transfers into b's vault
    // (whose own vaultId is a's, the source) as well as b's funding, and the transfers out of a's vault.
    const ids = (items: { transactionId: string }[]) => new Set(items.map((t) => t.transactionId));
    const intoB = await api
      .get(`/transactions?vaultId=${b.vaultId}&type=InternalTransfer&take=200`)
      .expect(200);
    expect(ids(intoB.body.items)).toEqual(ids(all));
    expect(intoB.body.items.every((t: { vaultId: string }) => t.vaultId === a.vaultId)).toBe(true);
    const outOfA = await api
      .get(`/transactions?vaultId=${a.vaultId}&type=InternalTransfer&take=200`)
      .expect(200);
    expect(ids(outOfA.body.items)).toEqual(ids(all));
    const since = await api.get(
      `/transactions?since=${encodeURIComponent(new Date(Date.now() + 60_000).toISOString())}`,
    );
    expect(since.body.items).toHaveLength(0);
    await api.get('/transactions?take=200').expect(200);
    const tooMany = await api.get('/transactions?take=201').expect(400);
    expect(tooMany.body).toEqual({
      message: 'take: take must be at most 200',
      errors: { take: ['take must be at most 200'] },
    });
    await api.get('/transactions?status=Nope').expect(400);
    const one = all[0];
    await api.get(`/transactions/${one.transactionId}`).expect(200);
    await other.get(`/transactions/${one.transactionId}`).expect(404);
    await api.get('/transactions/not-a-uuid').expect(404);
  });
});
