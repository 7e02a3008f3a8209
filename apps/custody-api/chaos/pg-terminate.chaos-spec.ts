import {
  loadUnderTermination,
  openSqlProbe,
  runBounded,
  seededRandom,
  type SqlProbe,
} from '@tessera/testing';
import {
  ASSETS,
  client,
  type Client,
  createKey,
  createTenant,
  creditedWallet,
  type Harness,
  startHarness,
} from '../test/support';
import { BOOK_OK, sats } from './support';

/**
 * Chaos (issue 15): pg_terminate_backend on every connection of the custody API's pool, every 150-450
 * ms (seeded), while REQUESTS transfers and withdrawals are in flight (bounded concurrency; on, up to 10×, until a cut
 * has failed one). Each request
 * fails cleanly — 503 in the contract's `{message}` shape, no stack — or succeeds; nothing is half-written
 * (a transaction exists with all of its ledger entries, its outbox event and its Idempotency-Key, or none of
 * them exists); the API recovers without a restart (the same keys retried afterwards succeed, replays answer
 * the stored response) and the ledger still equals the balances. No worker runs, so what the requests wrote
 * stays as they left it. Bounded: 120 s.
 */
const REQUESTS = Number(process.env.CHAOS_PG_REQUESTS ?? 400);
const SEED = Number(process.env.CHAOS_SEED ?? 1795290018);
const PARALLEL = 8;
const WALLETS = 4;
const UNAVAILABLE = { message: 'Service temporarily unavailable; retry with back-off' };

let h: Harness;
let api: Client;
let probe: SqlProbe;
const wallets: string[] = [];

beforeAll(async () => {
  h = await startHarness({ DB_POOL_SIZE: '10' }, { worker: false });
  api = client(h.api, await createKey(h.api, await createTenant(h.api)));
  for (let i = 0; i < WALLETS; i++) wallets.push((await creditedWallet(h, api, '1000')).walletId);
  await api.post('/address-book', { assetId: ASSETS.BTC, address: BOOK_OK, label: 'ok' }).expect(201);
  probe = await openSqlProbe(h.env.db.url, 'custody');
}, 60_000);

afterAll(async () => {
  await probe?.close();
  await h?.close();
});

interface Op {
  path: string;
  body: Record<string, unknown>;
  key: string;
  note: string;
  status?: number;
  text?: string;
  body201?: any;
}

it(`${REQUESTS} transfers and withdrawals under pg_terminate_backend: 503 or success, nothing half-written, recovery without restart`, async () => {
  const t0 = Date.now();
  const random = seededRandom(SEED);
  process.stdout.write(`chaos custody pg_terminate: seed ${SEED}, at least ${REQUESTS} requests\n`);
  const opAt = (i: number): Op => {
    const pick = () => wallets[Math.floor(random() * wallets.length)]!;
    const amount = sats(1 + Math.floor(random() * 1_000_000));
    const note = `pgt ${SEED} ${i}`;
    const key = `pgt-${SEED}-${i}`;
    if (random() < 0.5) {
      let destination = pick();
      const source = pick();
      if (destination === source) destination = wallets[(wallets.indexOf(source) + 1) % wallets.length]!;
      return {
        path: '/transactions/transfer',
        body: { sourceWalletId: source, destinationWalletId: destination, amount, note },
        key,
        note,
      };
    }
    return {
      path: '/transactions/withdraw',
      body: { sourceWalletId: pick(), destinationAddress: BOOK_OK, amount, note },
      key,
      note,
    };
  };
  const send = (op: Op) => api.post(op.path, op.body, { 'idempotency-key': op.key });

  const ops: Op[] = [];
  const { terminated, rounds } = await loadUnderTermination({
    probe,
    database: h.env.db.name,
    seed: SEED + 1,
    minimum: REQUESTS,
    parallel: PARALLEL,
    send: async (i) => {
      const op = (ops[i] = opAt(i));
      const res = await send(op);
      op.status = res.status;
      op.text = res.text;
      if (res.status === 201) op.body201 = res.body;
      return res.status === 503;
    },
  });

  // Clean failures only: 201, a 400 refusal (funds) or a 503 in the contract's shape, never a 500 or a stack.
  const count = (s: number) => ops.filter((op) => op.status === s).length;
  const others = ops.filter((op) => ![201, 400, 503].includes(op.status!));
  expect(others.map((op) => `${op.status} ${op.text}`)).toEqual([]);
  // Every wallet exists: a 400 naming one (a lookup the cut connection failed) would be a 503 told wrong.
  for (const op of ops.filter((o) => o.status === 400)) {
    expect(JSON.parse(op.text!).message).not.toBe('Wallet not found');
  }
  for (const op of ops.filter((o) => o.status === 503)) {
    expect(JSON.parse(op.text!)).toEqual(UNAVAILABLE);
    expect(op.text).not.toMatch(/\bat .*\.(js|ts)|stack|Connection terminated|57P01/i);
  }
  expect(terminated).toBeGreaterThan(0);
  expect(count(503)).toBeGreaterThan(0);
  expect(count(201)).toBeGreaterThan(0);

  // Nothing half-written: per request (by its note), the transaction, its ledger entries, its
  // transaction.created event and its Idempotency-Key are all there or none is.
  const rows = await probe.query<{
    note: string;
    id: string;
    type: string;
    entries: string[];
    created: number;
    keyed: number;
  }>(
    `SELECT t.note, t.id, t.type,
            coalesce((SELECT array_agg(e.kind ORDER BY e.kind) FROM ledger_entries e WHERE e.transaction_id = t.id), '{}') AS entries,
            (SELECT count(*)::int FROM outbox o WHERE o.entity_id = t.id::text AND o.event_type = 'transaction.created') AS created,
            (SELECT count(*)::int FROM idempotency_keys k WHERE k.response->>'transactionId' = t.id::text) AS keyed
     FROM transactions t WHERE t.note LIKE 'pgt %'`,
  );
  const byNote = new Map(rows.map((r) => [r.note, r]));
  for (const r of rows) {
    expect({ note: r.note, entries: r.entries, created: r.created, keyed: r.keyed }).toEqual({
      note: r.note,
      entries: r.type === 'InternalTransfer' ? ['transfer-in', 'transfer-out'] : ['hold'],
      created: 1,
      keyed: 1,
    });
  }
  // Every acknowledged request is stored as answered; no refused one is.
  for (const op of ops.filter((o) => o.status === 201))
    expect(byNote.get(op.note)?.id).toBe(op.body201.transactionId);
  for (const op of ops.filter((o) => o.status === 400)) expect(byNote.has(op.note)).toBe(false);
  // A 503 normally wrote nothing; if the cut came after COMMIT, the whole transaction is there (above) and
  // the retry below answers it.
  const committedBut503 = ops.filter((o) => o.status === 503 && byNote.has(o.note)).length;
  // No orphans of a request that never committed.
  const [orphans] = await probe.query<{ entries: number; events: number; keys: number }>(
    `SELECT (SELECT count(*)::int FROM ledger_entries e WHERE NOT EXISTS (SELECT 1 FROM transactions t WHERE t.id = e.transaction_id)) AS entries,
            (SELECT count(*)::int FROM outbox o WHERE o.entity_type = 'transaction' AND NOT EXISTS (SELECT 1 FROM transactions t WHERE t.id::text = o.entity_id)) AS events,
            (SELECT count(*)::int FROM idempotency_keys k WHERE NOT EXISTS (SELECT 1 FROM transactions t WHERE t.id::text = k.response->>'transactionId')) AS keys`,
  );
  expect(orphans).toEqual({ entries: 0, events: 0, keys: 0 });

  // Recovery without a restart: each 503 retried with its key now answers (a new transaction or the one
  // that committed), and every 201 replayed answers the stored response.
  const failed = ops.filter((o) => o.status === 503);
  const retried = await runBounded(failed.length, PARALLEL, (i) => send(failed[i]!));
  retried.forEach((res, i) => {
    expect([201, 400]).toContain(res.status);
    const before = byNote.get(failed[i]!.note);
    if (before) expect(res.body.transactionId).toBe(before.id);
  });
  const acknowledged = ops.filter((o) => o.status === 201);
  const replays = await runBounded(acknowledged.length, PARALLEL, (i) => send(acknowledged[i]!));
  replays.forEach((res, i) => {
    expect(res.status).toBe(201);
    expect(res.body).toEqual(acknowledged[i]!.body201);
  });
  const [{ n: stored }] = await probe.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM transactions WHERE note LIKE 'pgt %'`,
  );
  expect(stored).toBe(count(201) + retried.filter((r) => r.status === 201).length - committedBut503);

  // The ledger still equals the balances, none negative.
  const mismatches = await probe.query(
    `SELECT b.wallet_id FROM balances b
     LEFT JOIN (SELECT wallet_id, sum(total_delta) t, sum(available_delta) a, sum(pending_delta) p,
                       sum(locked_delta) l FROM ledger_entries GROUP BY wallet_id) e ON e.wallet_id = b.wallet_id
     WHERE b.total <> coalesce(e.t, 0) OR b.available <> coalesce(e.a, 0) OR b.pending <> coalesce(e.p, 0)
        OR b.locked <> coalesce(e.l, 0) OR b.available < 0 OR b.locked < 0`,
  );
  expect(mismatches).toEqual([]);
  process.stdout.write(
    `chaos custody pg_terminate: ${ops.length} requests (${count(201)}×201, ${count(400)}×400, ${count(503)}×503, 0 5xx other ` +
      `than 503), ${terminated} connections terminated in ${rounds} rounds, ${committedBut503} committed before the cut, ` +
      `${failed.length} retried (${retried.filter((r) => r.status === 201).length}×201), ${replays.length} replays; ` +
      `${Date.now() - t0} ms\n`,
  );
}, 120_000);
