import {
  ASSETS,
  client,
  type Client,
  createKey,
  createTenant,
  fundedWallet,
  type Harness,
  newIdempotencyKey,
  startHarness,
  waitFor,
} from './support';

/**
 * Withdrawal destinations the address book takes, end to end: a Taproot (bech32m) address is an address (bitcoinjs-lib
 * refused every one without an ECC library), and a malformed XRP tag on a withdrawal is named as the tag's error, not
 * as an address missing from the book (decision 0473's 2026-11-29 addendum).
 */
const XRP_OK = 'rHb9CJAWyB4rj91VRWn96DkukG4bwdtyTh';
// BIP 350 test vectors: valid bech32m (taproot, witness v1) testnet addresses.
const TAPROOT_TESTNET = 'tb1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vq47zagq';

let h: Harness;
let api: Client;

beforeAll(async () => {
  h = await startHarness();
  const tenantId = await createTenant(h.api);
  api = client(h.api, await createKey(h.api, tenantId));
}, 60_000);
afterAll(async () => {
  await h?.close();
});

describe('withdrawal destinations', () => {
  it('a valid taproot (bech32m) address is accepted in the address book and can be withdrawn to', async () => {
    const res = await api.post('/address-book', {
      assetId: ASSETS.BTC,
      address: TAPROOT_TESTNET,
      label: 'taproot',
    });
    expect({ status: res.status, body: res.body }).toMatchObject({ status: 201 });
    const w = await fundedWallet(api, ASSETS.BTC, '1');
    const wd = await api.post(
      '/transactions/withdraw',
      { sourceWalletId: w.walletId, destinationAddress: TAPROOT_TESTNET, amount: '0.1' },
      { 'idempotency-key': newIdempotencyKey() },
    );
    expect(wd.status).toBe(201);
    const done = await waitFor(
      () => api.get(`/transactions/${wd.body.transactionId}`).then((r) => r.body),
      (b) => ['Completed', 'Failed'].includes(b.status),
    );
    expect(done.status).toBe('Completed');
  });

  it.each(['4294967296', 'abc', '-1'])(
    'a withdrawal with a malformed XRP tag %j names destinationTag',
    async (tag) => {
      await api.post('/address-book', { assetId: ASSETS.XRP, address: XRP_OK, tag: '77', label: 't' });
      const xrp = await fundedWallet(api, ASSETS.XRP, '5');
      const res = await api.post(
        '/transactions/withdraw',
        { sourceWalletId: xrp.walletId, destinationAddress: XRP_OK, destinationTag: tag, amount: '1' },
        { 'idempotency-key': newIdempotencyKey() },
      );
      expect(res.status).toBe(400);
      expect(res.body).toEqual({
        message: 'Destination tag must be an integer 0..4294967295',
        errors: { destinationTag: ['Destination tag must be an integer 0..4294967295'] },
      });
    },
  );
});
