import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { DESTINATION_REMOVED } from '../src/modules/transactions/transactions.processor';
import {
  admin,
  ASSETS,
  bootWorker,
  client,
  type Client,
  createKey,
  createTenant,
  creditedWallet as creditedWalletFor,
  type Harness,
  holding,
  type KeyPair,
  lockWaiters,
  newIdempotencyKey,
  sql,
  startHarness,
  waitFor,
} from './support';

/**
 * "Withdrawals may only target addresses that already exist in the tenant's address book": the check and a
 * DELETE of the entry happen in one serial order (the writer holds the entry FOR SHARE in its write transaction),
 * and the worker checks again before the funds leave (decision 0220). Real API, worker and Postgres; the test
 * orders the two requests by holding the row or advisory locks they wait for.
 */
const BOOK = 'tb1qw508d6qejxtdg4y5r3zarvary0c5xw7kxpjzsx';

let h: Harness;
let tenantId: string;
let api: Client;
let approverKey: KeyPair;
let worker: NestFastifyApplication | undefined;

beforeAll(async () => {
  // No worker until the last test: the withdrawals stay where the requests leave them.
  h = await startHarness({}, { worker: false });
  tenantId = await createTenant(h.api);
  api = client(h.api, await createKey(h.api, tenantId));
  approverKey = await createKey(h.api, tenantId, { scopes: ['transactions:read', 'withdrawals:approve'] });
}, 60_000);
afterAll(async () => {
  await worker?.close();
  await h?.close();
});

const addEntry = async () =>
  (await api.post('/address-book', { assetId: ASSETS.BTC, address: BOOK, label: 'Cold' }).expect(201)).body
    .id as string;

const withdraw = (walletId: string, amount: string) =>
  api.post(
    '/transactions/withdraw',
    { sourceWalletId: walletId, destinationAddress: BOOK, amount },
    { 'idempotency-key': newIdempotencyKey() },
  );

const withdrawalsOf = (walletId: string) =>
  sql<{ n: number }>(
    h,
    `SELECT count(*)::int AS n FROM transactions WHERE wallet_id = $1 AND type = 'Withdrawal'`,
    [walletId],
  ).then((r) => r[0]!.n);

describe('address book and withdrawals in one order', () => {
  it('an entry deleted while the withdrawal waits for its wallet: 400 on destinationAddress, nothing created', async () => {
    const entryId = await addEntry();
    const w = await creditedWalletFor(h, api, '1');
    // The wallet's balance row is busy: the withdrawal passes its checks before the write and waits for it.
    const lock = await holding(h, 'SELECT 1 FROM balances WHERE wallet_id = $1 FOR UPDATE', [w.walletId]);
    let answer: Promise<{ status: number; body: Record<string, unknown> }>;
    try {
      answer = withdraw(w.walletId, '0.25').then((r) => r);
      await waitFor(
        () => lockWaiters(h, '%"balances"%FOR UPDATE%'),
        (n) => n === 1,
      );
      // The DELETE commits meanwhile.
      await api.delete(`/address-book/${entryId}`).expect(204);
    } finally {
      await lock.release();
    }
    const res = await answer!;
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      message: 'Destination address is not in the address book',
      errors: { destinationAddress: ['Add this address to the address book for this asset first'] },
    });
    expect(await withdrawalsOf(w.walletId)).toBe(0);
    expect((await api.get(`/wallets/${w.walletId}/balance`)).body).toMatchObject({
      available: '1',
      locked: '0',
    });
  });

  it('a DELETE arriving while the withdrawal holds the entry waits for it: the withdrawal is created first', async () => {
    const entryId = await addEntry();
    const w = await creditedWalletFor(h, api, '1');
    // The withdrawal's write transaction pauses at its insert (a trigger waits for an advisory lock the test
    // holds), after its checks: the entry is then held by it.
    await sql(
      h,
      `CREATE FUNCTION test_pause_insert() RETURNS trigger LANGUAGE plpgsql AS
         $$ BEGIN PERFORM pg_advisory_xact_lock_shared(4242); RETURN NEW; END $$`,
    );
    await sql(
      h,
      `CREATE TRIGGER test_pause_insert BEFORE INSERT ON transactions FOR EACH ROW
         EXECUTE FUNCTION test_pause_insert()`,
    );
    const pause = await holding(h, 'SELECT pg_advisory_xact_lock(4242)');
    let created: Promise<{ status: number; body: Record<string, unknown> }>;
    let deleted: Promise<{ status: number }>;
    try {
      created = withdraw(w.walletId, '0.25').then((r) => r);
      await waitFor(
        () => lockWaiters(h, '%', 'advisory'),
        (n) => n === 1,
      );
      deleted = api.delete(`/address-book/${entryId}`).then((r) => r);
      // The DELETE waits for the withdrawal's transaction (it holds the entry FOR SHARE).
      await waitFor(
        () => lockWaiters(h, 'DELETE FROM "address_book"%'),
        (n) => n === 1,
      );
    } finally {
      await pause.release();
      await sql(h, 'DROP TRIGGER test_pause_insert ON transactions');
      await sql(h, 'DROP FUNCTION test_pause_insert()');
    }
    const res = await created!;
    expect(res.status).toBe(201);
    expect((await deleted!).status).toBe(204);
    expect((await api.get(`/transactions/${res.body.transactionId}`).expect(200)).body.status).toBe(
      'Submitted',
    );
    await api.get(`/address-book/${entryId}`).expect(404);
  });

  it('an entry deleted while the withdrawal waits for its approvals: after the quorum it fails before it is sent', async () => {
    await admin(h.api)
      .put(`/admin/tenants/${tenantId}/policies/test`, {
        approvals: [{ asset: 'BTC', above: '0', required: 1, approvers: [approverKey.apiKey] }],
      })
      .expect(200);
    worker = await bootWorker(h);
    const entryId = await addEntry();
    const w = await creditedWalletFor(h, api, '1');
    const id = (await withdraw(w.walletId, '0.25').expect(201)).body.transactionId as string;
    await api.delete(`/address-book/${entryId}`).expect(204);

    const approved = await client(h.api, approverKey).post(`/transactions/${id}/approve`, {}).expect(200);
    expect(approved.body.pendingApprovals).toMatchObject({ status: 'approved' });
    const failed = await waitFor(
      () => api.get(`/transactions/${id}`).then((r) => r.body),
      (t) => ['Completed', 'Failed', 'Cancelled'].includes(t.status),
    );
    expect(failed).toMatchObject({
      status: 'Failed',
      failureReason: DESTINATION_REMOVED,
      txHash: null,
      completedAt: expect.any(String),
    });
    expect((await api.get(`/wallets/${w.walletId}/balance`)).body).toMatchObject({
      total: '1',
      available: '1',
      locked: '0',
    });
  });
});

/**
 * One entry per destination (decision 0475): with two entries for one address, deleting one left withdrawals to it
 * allowed through the other. A second entry for the same asset, address (however it is spelled) and tag is 409.
 */
describe('one entry per destination', () => {
  const P2WSH = 'tb1qrp33g0q5c5txsp9arysrx4k6zdkfs4nce4xj0gdcccefvpysxf3q0sl5k7';
  const XRP = 'rHb9CJAWyB4rj91VRWn96DkukG4bwdtyTh';
  const entriesFor = async (address: string) =>
    ((await api.get('/address-book').expect(200)).body.items as { id: string; address: string }[]).filter(
      (e) => e.address === address,
    );

  it('the same address again, spelled in capitals, is 409 naming the entry that holds it', async () => {
    const first = await api
      .post('/address-book', { assetId: ASSETS.BTC, address: P2WSH, label: 'A' })
      .expect(201);
    const again = await api.post('/address-book', {
      assetId: ASSETS.BTC,
      address: P2WSH.toUpperCase(),
      label: 'B',
    });
    expect(again.status).toBe(409);
    expect(again.body).toEqual({ message: expect.stringContaining(first.body.id as string) });
    expect(await entriesFor(P2WSH)).toHaveLength(1);
    // Deleted, the destination can be added again, and then it is the only entry.
    await api.delete(`/address-book/${first.body.id as string}`).expect(204);
    await api.post('/address-book', { assetId: ASSETS.BTC, address: P2WSH, label: 'C' }).expect(201);
    expect(await entriesFor(P2WSH)).toHaveLength(1);
  });

  it('six creates of one destination at once: one 201, five 409, one row', async () => {
    const address = 'tb1qqqqqp399et2xygdj5xreqhjjvcmzhxw4aywxecjdzew6hylgvsesrxh6hy';
    const answers = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        api.post('/address-book', { assetId: ASSETS.BTC, address, label: `race ${i}` }).then((r) => r.status),
      ),
    );
    expect(answers.sort()).toEqual([201, 409, 409, 409, 409, 409]);
    expect(await entriesFor(address)).toHaveLength(1);
  });

  it('one address with two tags is two destinations', async () => {
    await api
      .post('/address-book', { assetId: ASSETS.XRP, address: XRP, tag: '1', label: 'one' })
      .expect(201);
    await api
      .post('/address-book', { assetId: ASSETS.XRP, address: XRP, tag: '2', label: 'two' })
      .expect(201);
    expect(
      (await api.post('/address-book', { assetId: ASSETS.XRP, address: XRP, tag: '2', label: 'again' }))
        .status,
    ).toBe(409);
    expect(await entriesFor(XRP)).toHaveLength(2);
  });
});
