import {
  ASSETS,
  client,
  type Client,
  createKey,
  createTenant,
  creditedWallet as creditedWalletFor,
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

const creditedWallet = (amount: string) => creditedWalletFor(h, api, amount);

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
  }, 60_000);

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

  it('300 concurrent transfers in every direction among 5 wallets: no overdraft, ledger = balances, value conserved', async () => {
    const wallets: string[] = [];
    const vaultBalances: string[] = [];
    for (let i = 0; i < 5; i++) {
      const w = await creditedWallet('0.5');
      wallets.push(w.walletId);
      vaultBalances.push(`${w.vaultId}:${ASSETS.BTC}`);
    }
    let seed = 7;
    const next = () => (seed = (seed * 48271) % 2147483647);
    const results = await Promise.all(
      Array.from({ length: 300 }, () => {
        const s = next() % 5;
        const d = (s + 1 + (next() % 4)) % 5;
        return api.post(
          '/transactions/transfer',
          { sourceWalletId: wallets[s], destinationWalletId: wallets[d], amount: '0.1' },
          { 'idempotency-key': newIdempotencyKey() },
        );
      }),
    );
    const created = results.filter((r) => r.status === 201).length;
    expect(results.every((r) => r.status === 201 || r.status === 400)).toBe(true);
    expect(created).toBeGreaterThan(0);
    const [check] = await sql<{ n: number; mismatches: number; negative: number; total: string }>(
      h,
      `SELECT (SELECT count(*)::int FROM transactions WHERE type = 'InternalTransfer' AND source_wallet_id = ANY($1::uuid[])) AS n,
              (SELECT count(*)::int FROM balances b
                 JOIN (SELECT wallet_id, sum(total_delta) t, sum(available_delta) a, sum(locked_delta) l
                       FROM ledger_entries GROUP BY wallet_id) e ON e.wallet_id = b.wallet_id
                 WHERE b.wallet_id = ANY($1::uuid[]) AND (b.total <> e.t OR b.available <> e.a OR b.locked <> e.l)) AS mismatches,
              (SELECT count(*)::int FROM balances WHERE available < 0) AS negative,
              (SELECT sum(total)::text FROM balances WHERE wallet_id = ANY($1::uuid[])) AS total`,
      [wallets],
    );
    expect(check).toEqual({ n: created, mismatches: 0, negative: 0, total: '250000000' });
    const [events] = await sql<{ n: number }>(
      h,
      `SELECT count(*)::int AS n FROM outbox WHERE event_type = 'transaction.created'
         AND entity_id IN (SELECT id::text FROM transactions WHERE source_wallet_id = ANY($1::uuid[]))`,
      [wallets],
    );
    expect(events.n).toBe(created);
    // Each batch commits one balance.updated per balance it moved (decision 0406): every balance got at least
    // one, and 300 requests at once share batches, so there are fewer than two per transfer.
    const balances = await sql<{ entity_id: string; n: number }>(
      h,
      `SELECT entity_id, count(*)::int AS n FROM outbox WHERE event_type = 'balance.updated'
         AND entity_id = ANY($1) GROUP BY entity_id`,
      [vaultBalances],
    );
    expect(balances).toHaveLength(5);
    expect(balances.reduce((sum, b) => sum + b.n, 0)).toBeLessThan(2 * created);
  }, 60_000);

  it('one Idempotency-Key sent at once with two different bodies: one transaction, the other body gets 400', async () => {
    const a = await creditedWallet('5');
    const b = await fundedWallet(api, ASSETS.BTC, undefined);
    const key = newIdempotencyKey();
    const bodies = [
      { sourceWalletId: a.walletId, destinationWalletId: b.walletId, amount: '0.1' },
      { sourceWalletId: a.walletId, destinationWalletId: b.walletId, amount: '0.2' },
    ];
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        api.post('/transactions/transfer', bodies[i % 2], { 'idempotency-key': key }),
      ),
    );
    const won = results.find((r) => r.status === 201)!;
    const winner = won.body.amount;
    for (const [i, r] of results.entries()) {
      if (bodies[i % 2]!.amount === winner) {
        expect(r.status).toBe(201);
        expect(r.body.transactionId).toBe(won.body.transactionId);
      } else {
        expect(r.status).toBe(400);
        expect(r.body.errors).toHaveProperty('Idempotency-Key');
      }
    }
    const [count] = await sql<{ n: number }>(
      h,
      'SELECT count(*)::int AS n FROM transactions WHERE source_wallet_id = $1',
      [a.walletId],
    );
    expect(count.n).toBe(1);
  });

  // Decision 0205: a batch is written by ONE statement when it applies whole; these two make it not apply
  // whole (a wallet that would go short, a key already taken), so the batch must fall back to the
  // step-by-step path and still give every caller the answer it would have had alone.
  it('transfers that together overdraw a wallet, sent at once: exactly the funded ones commit, in order', async () => {
    const a = await creditedWallet('0.5');
    const b = await fundedWallet(api, ASSETS.BTC, undefined);
    const results = await Promise.all(
      Array.from({ length: 10 }, () =>
        api.post(
          '/transactions/transfer',
          { sourceWalletId: a.walletId, destinationWalletId: b.walletId, amount: '0.1' },
          { 'idempotency-key': newIdempotencyKey() },
        ),
      ),
    );
    const statuses = results.map((r) => r.status);
    expect(statuses.filter((s) => s === 201)).toHaveLength(5);
    expect(statuses.filter((s) => s === 400)).toHaveLength(5);
    expect((await api.get(`/wallets/${a.walletId}/balance`)).body).toMatchObject({
      total: '0',
      available: '0',
    });
    expect((await api.get(`/wallets/${b.walletId}/balance`)).body).toMatchObject({ total: '0.5' });
    const [counts] = await sql<{ n: number; out: number }>(
      h,
      `SELECT (SELECT count(*)::int FROM transactions WHERE source_wallet_id = $1) AS n,
              (SELECT count(*)::int FROM ledger_entries WHERE wallet_id = $1 AND kind = 'transfer-out') AS out`,
      [a.walletId],
    );
    expect(counts).toEqual({ n: 5, out: 5 });
  });

  it('a replayed key among fresh ones at once: the replay gets its stored answer, the fresh ones commit', async () => {
    const a = await creditedWallet('5');
    const b = await fundedWallet(api, ASSETS.BTC, undefined);
    const body = { sourceWalletId: a.walletId, destinationWalletId: b.walletId, amount: '0.1' };
    const replayed = newIdempotencyKey();
    const first = await api.post('/transactions/transfer', body, { 'idempotency-key': replayed }).expect(201);
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        api.post('/transactions/transfer', body, {
          'idempotency-key': i === 4 ? replayed : newIdempotencyKey(),
        }),
      ),
    );
    expect(results.map((r) => r.status)).toEqual(Array(10).fill(201));
    expect(results[4]!.body).toEqual(first.body);
    expect(new Set(results.map((r) => r.body.transactionId)).size).toBe(10);
    const [count] = await sql<{ n: number }>(
      h,
      'SELECT count(*)::int AS n FROM transactions WHERE source_wallet_id = $1',
      [a.walletId],
    );
    expect(count.n).toBe(10);
    expect((await api.get(`/wallets/${a.walletId}/balance`)).body).toMatchObject({ total: '4' });
  });
});
