import { UUID_V7 } from '@tessera/testing';
import { DataSource } from 'typeorm';
import { TransactionEventSequence1795520000000 } from '../src/database/migrations/1795520000000-TransactionEventSequence';
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
  waitFor,
} from './support';

/**
 * Ordered webhooks in custody (decision 0225): the real write paths (the transfer group commit, the worker's
 * status machine, the deposit path) number every outbox row per entity without gaps, and a transaction's
 * events are numbered in the order of its lifecycle.
 */
let h: Harness;
let api: Client;

const LIFECYCLE = ['Submitted', 'PendingSignature', 'Broadcasting', 'Confirming', 'Completed'];

beforeAll(async () => {
  h = await startHarness();
  api = client(h.api, await createKey(h.api, await createTenant(h.api)));
}, 60_000);
afterAll(() => h?.close());

/** A transfer between two fresh wallets, once the worker has taken it to Completed (five events). */
async function completedTransfer(): Promise<string> {
  const [a, b] = [await fundedWallet(api, ASSETS.BTC, '1'), await fundedWallet(api, ASSETS.BTC, '1')];
  const res = await api.post(
    '/transactions/transfer',
    { sourceWalletId: a.walletId, destinationWalletId: b.walletId, amount: '0.01' },
    { 'idempotency-key': newIdempotencyKey() },
  );
  expect(res.status).toBe(201);
  const id = res.body.transactionId as string;
  await waitFor(
    async () =>
      (await sql<{ status: string }>(h, 'SELECT status FROM transactions WHERE id = $1', [id]))[0]!.status,
    (status) => status === 'Completed',
    30_000,
  );
  return id;
}

describe('outbox sequence (custody)', () => {
  it('60 concurrent transfers among 3 wallets: every entity numbered 1..n, transactions in lifecycle order', async () => {
    const wallets = [
      await fundedWallet(api, ASSETS.BTC, '1'),
      await fundedWallet(api, ASSETS.BTC, '1'),
      await fundedWallet(api, ASSETS.BTC, '1'),
    ];
    const results = await Promise.all(
      Array.from({ length: 60 }, (_, i) =>
        api.post(
          '/transactions/transfer',
          {
            sourceWalletId: wallets[i % 3]!.walletId,
            destinationWalletId: wallets[(i + 1) % 3]!.walletId,
            amount: '0.01',
          },
          { 'idempotency-key': newIdempotencyKey() },
        ),
      ),
    );
    expect(results.every((r) => r.status === 201)).toBe(true);
    const ids = results.map((r) => r.body.transactionId as string);
    await waitFor(
      async () =>
        (
          await sql<{ n: number }>(
            h,
            `SELECT count(*)::int AS n FROM transactions WHERE id = ANY($1::uuid[]) AND status = 'Completed'`,
            [ids],
          )
        )[0]!.n,
      (n) => n === 60,
      30_000,
    );

    // Every (tenant, entity type, entity id) of the outbox: its numbers are exactly 1..count.
    const gaps = await sql(
      h,
      `SELECT tenant_id, entity_type, entity_id, count(*)::int AS n, min(sequence)::int AS lo,
              max(sequence)::int AS hi, count(DISTINCT sequence)::int AS distinct_n
       FROM outbox GROUP BY 1, 2, 3
       HAVING min(sequence) <> 1 OR max(sequence) <> count(*) OR count(DISTINCT sequence) <> count(*)`,
    );
    expect(gaps).toEqual([]);
    const [counters] = await sql<{ mismatched: number }>(
      h,
      `SELECT count(*)::int AS mismatched FROM outbox_sequence s
       WHERE s.last_sequence <> (SELECT max(o.sequence) FROM outbox o WHERE o.tenant_id = s.tenant_id
                                   AND o.entity_type = s.entity_type AND o.entity_id = s.entity_id)`,
    );
    expect(counters!.mismatched).toBe(0);

    // Each transfer: transaction.created is 1, then its statuses in lifecycle order.
    const events = await sql<{ entity_id: string; sequence: string; event_type: string; status: string }>(
      h,
      `SELECT entity_id, sequence::text, event_type, data->>'status' AS status FROM outbox
       WHERE entity_type = 'transaction' AND entity_id = ANY($1) ORDER BY entity_id, sequence`,
      [ids],
    );
    for (const id of ids) {
      const mine = events.filter((e) => e.entity_id === id);
      expect(mine[0]).toMatchObject({ sequence: '1', event_type: 'transaction.created' });
      const order = mine.map((e) => LIFECYCLE.indexOf(e.status));
      expect(order).toEqual([...order].sort((a, b) => a - b));
      expect(mine[mine.length - 1]!.status).toBe('Completed');
    }
    // The balance entities of the three vaults got one number per balance.updated, gap-free (checked above).
    const [balances] = await sql<{ n: number }>(
      h,
      `SELECT count(DISTINCT entity_id)::int AS n FROM outbox WHERE entity_type = 'balance'
         AND entity_id = ANY($1)`,
      [wallets.map((w) => `${w.vaultId}:${ASSETS.BTC}`)],
    );
    expect(balances!.n).toBe(3);

    // A transaction's events are numbered from its row (decision 0425): the row holds its latest number, and
    // the counter table holds no transactions.
    const [rows] = await sql<{ mismatched: number; counters: number }>(
      h,
      `SELECT (SELECT count(*)::int FROM transactions t WHERE t.id = ANY($1::uuid[])
                 AND t.event_sequence <> (SELECT max(o.sequence) FROM outbox o
                                          WHERE o.entity_type = 'transaction' AND o.entity_id = t.id::text)) AS mismatched,
              (SELECT count(*)::int FROM outbox_sequence WHERE entity_type = 'transaction') AS counters`,
      [ids],
    );
    expect(rows).toEqual({ mismatched: 0, counters: 0 });
  }, 90_000);

  it('numbers a transaction event given without its number from the row (a previous release), others from the counters', async () => {
    const insert = (entityType: string, entityId: string, eventType = 'test.event') =>
      sql(
        h,
        `INSERT INTO outbox (id, tenant_id, event_type, entity_type, entity_id, data, occurred_at)
         VALUES (gen_random_uuid(), 'tenant-x', $3, $1, $2, '{}', now()) RETURNING sequence::int`,
        [entityType, entityId, eventType],
      );
    await expect(insert('transaction', crypto.randomUUID())).rejects.toThrow(
      /has no row to number its event/,
    );
    const id = await completedTransfer();
    expect(await insert('transaction', id)).toEqual([{ sequence: 6 }]);
    expect(await sql(h, 'SELECT event_sequence::int AS s FROM transactions WHERE id = $1', [id])).toEqual([
      { s: 6 },
    ]);
    expect(await insert('transaction', crypto.randomUUID(), 'transaction.created')).toEqual([
      { sequence: 1 },
    ]);
    const entity = crypto.randomUUID();
    expect(await insert('wallet', entity)).toEqual([{ sequence: 1 }]);
    expect(await insert('wallet', entity)).toEqual([{ sequence: 2 }]);
  }, 60_000);

  it('makes time-ordered ids (decision 0432): transactions, ledger entries and outbox rows are UUIDv7', async () => {
    const tenantId = await createTenant(h.api);
    api = client(h.api, await createKey(h.api, tenantId));
    const id = await completedTransfer();
    // The transfer, the deposits that funded its wallets, their ledger entries and every event the API, the
    // worker and the deposit path wrote for them; each id's first 48 bits are the time it was made, in ms.
    const rows = await sql<{ kind: string; id: string; drift: number }>(
      h,
      `WITH made AS (
         SELECT 'transaction' AS kind, id, created_at FROM transactions WHERE tenant_id::text = $1
         UNION ALL
         SELECT 'ledger', l.id, l.created_at FROM ledger_entries l JOIN transactions t ON t.id = l.transaction_id
          WHERE t.tenant_id::text = $1
         UNION ALL
         SELECT 'outbox', id, created_at FROM outbox WHERE tenant_id = $1)
       SELECT kind, id::text, abs(('x' || substr(replace(id::text, '-', ''), 1, 12))::bit(48)::bigint
                                  - (extract(epoch FROM created_at) * 1000)::bigint)::int AS drift
       FROM made`,
      [tenantId],
    );
    const count = (kind: string) => rows.filter((r) => r.kind === kind).length;
    expect(count('transaction')).toBeGreaterThanOrEqual(3);
    expect(count('ledger')).toBeGreaterThanOrEqual(4);
    expect(count('outbox')).toBeGreaterThanOrEqual(5);
    expect(rows.filter((r) => !UUID_V7.test(r.id))).toEqual([]);
    // Made in Node (transactions) or in SQL (the rest) within moments of the row's created_at.
    expect(rows.filter((r) => r.drift > 5_000)).toEqual([]);
    expect(rows.some((r) => r.id === id)).toBe(true);
  }, 60_000);

  it('the migration moves existing transactions off the counter table and back', async () => {
    const id = await completedTransfer();
    const runner = h.api.get(DataSource).createQueryRunner();
    const migration = new TransactionEventSequence1795520000000();
    try {
      await migration.down(runner);
      const counter = await sql<{ last: number }>(
        h,
        `SELECT last_sequence::int AS last FROM outbox_sequence WHERE entity_type = 'transaction' AND entity_id = $1`,
        [id],
      );
      expect(counter).toEqual([{ last: 5 }]);
      await migration.up(runner);
    } finally {
      await runner.release();
    }
    const after = await sql<{ seq: number; counters: number }>(
      h,
      `SELECT event_sequence::int AS seq,
              (SELECT count(*)::int FROM outbox_sequence WHERE entity_type = 'transaction') AS counters
       FROM transactions WHERE id = $1`,
      [id],
    );
    expect(after).toEqual([{ seq: 5, counters: 0 }]);
  }, 60_000);
});
