import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { bootApp } from '@tessera/testing';
import { AppModule } from '../src/app.module';
import { loadEnv } from '../src/config/env';
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
/** A second API replica on the same database and Redis: its requests are batched apart from the first one's. */
let replica: NestFastifyApplication;
let onReplica: Client;

beforeAll(async () => {
  // No worker: holds stay in place while the test looks at them.
  h = await startHarness({ DB_POOL_SIZE: '10' }, { worker: false });
  const key = await createKey(h.api, await createTenant(h.api));
  api = client(h.api, key);
  replica = await bootApp(
    AppModule.forRoot(loadEnv({ ...h.env.env, CUSTODY_RATE_LIMIT_PER_KEY: '100000' })),
    {
      rpc: false,
    },
  );
  onReplica = client(replica, key);
  await api.post('/address-book', { assetId: ASSETS.BTC, address: BOOK_ADDRESS, label: 'Cold' }).expect(201);
});
afterAll(async () => {
  await replica?.close();
  await h?.close();
});

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

  it('withdrawals and transfers from one wallet through two replicas at once, together 4× its balance: the accepted fit it, the rest get the contract 400, nothing half-written', async () => {
    const w = await creditedWallet('1');
    const to = await fundedWallet(api, ASSETS.BTC, undefined);
    const SAT = 100_000_000n;
    const amounts = ['0.01', '0.02', '0.03', '0.05'];
    const sent = Array.from({ length: 160 }, (_, i) => {
      const amount = amounts[i % amounts.length]!;
      const key = newIdempotencyKey();
      const via = i % 2 === 0 ? api : onReplica;
      const withdrawal = i % 4 < 2;
      const answer = withdrawal
        ? via.post(
            '/transactions/withdraw',
            { sourceWalletId: w.walletId, destinationAddress: BOOK_ADDRESS, amount },
            { 'idempotency-key': key },
          )
        : via.post(
            '/transactions/transfer',
            { sourceWalletId: w.walletId, destinationWalletId: to.walletId, amount },
            { 'idempotency-key': key },
          );
      return { amount: BigInt(Math.round(Number(amount) * 1e8)), key, withdrawal, answer };
    });
    const results = await Promise.all(sent.map((r) => r.answer));
    const accepted = sent.filter((_, i) => results[i]!.status === 201);
    const refused = sent.filter((_, i) => results[i]!.status !== 201);
    for (const r of results.filter((x) => x.status !== 201)) {
      expect({ status: r.status, body: r.body }).toEqual({
        status: 400,
        body: {
          message: 'Insufficient available balance',
          errors: { amount: ['Exceeds the available balance'] },
        },
      });
    }
    const sum = (list: typeof sent) => list.reduce((a, r) => a + r.amount, 0n);
    const withdrawn = sum(accepted.filter((r) => r.withdrawal));
    const transferred = sum(accepted.filter((r) => !r.withdrawal));
    expect(withdrawn + transferred <= SAT).toBe(true);
    // Each refusal was decided against what was left then, which only shrinks: none would fit what is left now.
    const left = SAT - withdrawn - transferred;
    expect(refused.length).toBeGreaterThan(0);
    for (const r of refused) expect(r.amount > left).toBe(true);
    const units = (v: bigint) => (Number(v) / 1e8).toString();
    expect((await api.get(`/wallets/${w.walletId}/balance`)).body).toMatchObject({
      total: units(SAT - transferred),
      available: units(left),
      locked: units(withdrawn),
    });
    expect((await api.get(`/wallets/${to.walletId}/balance`)).body).toMatchObject({
      total: units(transferred),
    });
    // Nothing half-written: one transaction, its ledger entries, its transaction.created and its key per accepted
    // request; no row, entry, event or key for a refused one; balances equal their ledgers, none negative.
    const [rows] = await sql<Record<string, number>>(
      h,
      `SELECT (SELECT count(*)::int FROM transactions WHERE source_wallet_id = $1) AS transactions,
              (SELECT count(*)::int FROM ledger_entries e JOIN transactions t ON t.id = e.transaction_id
                WHERE t.source_wallet_id = $1) AS entries,
              (SELECT count(*)::int FROM outbox o JOIN transactions t ON t.id::text = o.entity_id::text
                WHERE t.source_wallet_id = $1 AND o.event_type = 'transaction.created') AS created,
              (SELECT count(*)::int FROM idempotency_keys WHERE key = ANY($2)) AS acceptedKeys,
              (SELECT count(*)::int FROM idempotency_keys WHERE key = ANY($3)) AS refusedKeys,
              (SELECT count(*)::int FROM balances WHERE available < 0 OR locked < 0 OR total < 0) AS negative,
              (SELECT count(*)::int FROM balances b, LATERAL (SELECT COALESCE(sum(total_delta), 0) AS t,
                 COALESCE(sum(available_delta), 0) AS a, COALESCE(sum(locked_delta), 0) AS l
                 FROM ledger_entries e WHERE e.wallet_id = b.wallet_id) s
                WHERE b.wallet_id IN ($1, $4) AND (b.total, b.available, b.locked) IS DISTINCT FROM (s.t, s.a, s.l))
                AS drifted`,
      [w.walletId, accepted.map((r) => r.key), refused.map((r) => r.key), to.walletId],
    );
    const transfers = accepted.filter((r) => !r.withdrawal).length;
    expect(rows).toEqual({
      transactions: accepted.length,
      // A withdrawal holds on its wallet (one entry); a transfer moves both wallets (two).
      entries: accepted.length + transfers,
      created: accepted.length,
      acceptedkeys: accepted.length,
      refusedkeys: 0,
      negative: 0,
      drifted: 0,
    });
  }, 60_000);
});
