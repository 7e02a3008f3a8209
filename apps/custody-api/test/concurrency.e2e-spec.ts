import {
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
} from './support';

const BOOK_ADDRESS = 'tb1qw508d6qejxtdg4y5r3zarvary0c5xw7kxpjzsx';

let h: Harness;
let api: Client;

beforeAll(async () => {
  // No worker: holds stay in place while the test looks at them.
  h = await startHarness({ DB_POOL_SIZE: '10' }, { worker: false });
  api = client(h.api, await createKey(h.api, await createTenant(h.api)));
  await api.post('/address-book', { assetId: ASSETS.BTC, address: BOOK_ADDRESS, label: 'Cold' }).expect(201);
});
afterAll(() => h?.close());

async function creditedWallet(amount: string) {
  const w = await fundedWallet(api, ASSETS.BTC, undefined);
  // Credit through the sandbox deposit path's ledger effect without a worker: complete it by hand.
  const dep = await api.post('/sandbox/deposits', { walletId: w.walletId, amount }).expect(201);
  await sql(
    h,
    `WITH t AS (UPDATE transactions SET status = 'Completed', completed_at = now() WHERE id = $1 RETURNING amount)
     , e AS (INSERT INTO ledger_entries (wallet_id, transaction_id, kind, total_delta, available_delta, pending_delta, locked_delta)
             SELECT $2, $1, 'deposit-credit', amount, amount, -amount, 0 FROM t)
     UPDATE balances SET total = total + (SELECT amount FROM t), available = available + (SELECT amount FROM t),
       pending = pending - (SELECT amount FROM t) WHERE wallet_id = $2`,
    [dep.body.transactionId, w.walletId],
  );
  return w;
}

describe('concurrency', () => {
  it('200 concurrent withdrawals that together exceed the balance: zero overdraft', async () => {
    const w = await creditedWallet('1');
    const results = await Promise.all(
      Array.from({ length: 200 }, () =>
        api.post(
          '/transactions/withdraw',
          { sourceWalletId: w.walletId, destinationAddress: BOOK_ADDRESS, amount: '0.01' },
          { 'idempotency-key': newIdempotencyKey() },
        ),
      ),
    );
    const statuses = results.map((r) => r.status);
    expect(statuses.filter((s) => s === 201)).toHaveLength(100);
    expect(statuses.filter((s) => s === 400)).toHaveLength(100);
    for (const r of results.filter((x) => x.status === 400)) {
      expect(r.body).toEqual({
        message: 'Insufficient available balance',
        errors: { amount: ['Exceeds the available balance'] },
      });
    }
    const balance = await api.get(`/wallets/${w.walletId}/balance`).expect(200);
    expect(balance.body).toMatchObject({ total: '1', available: '0', locked: '1', pending: '0' });
    const [counts] = await sql<{ n: number; negative: number }>(
      h,
      `SELECT (SELECT count(*)::int FROM transactions WHERE source_wallet_id = $1) AS n,
              (SELECT count(*)::int FROM balances WHERE available < 0) AS negative`,
      [w.walletId],
    );
    expect(counts).toEqual({ n: 100, negative: 0 });
    const [ledger] = await sql<{ available: string; locked: string }>(
      h,
      `SELECT sum(available_delta)::text AS available, sum(locked_delta)::text AS locked FROM ledger_entries
       WHERE wallet_id = $1`,
      [w.walletId],
    );
    expect(ledger).toEqual({ available: '0', locked: '100000000' });
  });

  it('50 concurrent requests with one Idempotency-Key: one transaction, one response', async () => {
    const a = await creditedWallet('5');
    const b = await fundedWallet(api, ASSETS.BTC, undefined);
    const key = newIdempotencyKey();
    const body = { sourceWalletId: a.walletId, destinationWalletId: b.walletId, amount: '0.3' };
    const results = await Promise.all(
      Array.from({ length: 50 }, () => api.post('/transactions/transfer', body, { 'idempotency-key': key })),
    );
    expect(results.map((r) => r.status)).toEqual(Array(50).fill(201));
    const ids = new Set(results.map((r) => r.body.transactionId));
    expect(ids.size).toBe(1);
    const [count] = await sql<{ n: number }>(
      h,
      'SELECT count(*)::int AS n FROM transactions WHERE source_wallet_id = $1',
      [a.walletId],
    );
    expect(count.n).toBe(1);
    const created = await sql(
      h,
      `SELECT 1 FROM outbox WHERE event_type = 'transaction.created' AND entity_id = $1`,
      [[...ids][0]],
    );
    expect(created).toHaveLength(1);
    expect((await api.get(`/wallets/${a.walletId}/balance`)).body).toMatchObject({ total: '4.7' });
  });
});
