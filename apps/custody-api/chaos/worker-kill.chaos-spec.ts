import { JOBS } from '@tessera/contracts';
import { bullPrefix } from '@tessera/platform';
import {
  createTestEnvironment,
  kill9,
  openSqlProbe,
  runBounded,
  seededPercents,
  seededRandom,
  type ServiceProcess,
  type SqlProbe,
  type TestEnvironment,
} from '@tessera/testing';
import { Queue } from 'bullmq';
import { migrator } from '../test/support';
import {
  assertBuilt,
  BOOK_FAILS,
  BOOK_OK,
  BTC,
  chaosEnv,
  type HttpAnswer,
  sats,
  signedClient,
  type SignedHttpClient,
  startApiProcess,
  startWorkerProcess,
  createTenantKey,
} from './support';

/**
 * Chaos (issue 15): the custody worker (the built dist/worker.js, a child process next to the real API in
 * dist/main.js) is killed with SIGKILL at KILLS moments drawn from a printed seed while CHAOS_TRANSACTIONS
 * transactions (deposits, internal transfers, withdrawals, some failing at broadcast) go through the signed
 * API with Idempotency-Keys and bounded concurrency; it is started again after each kill. Afterwards:
 * every transaction ends terminal (the drain never stalls longer than the stuck bound), no ledger entry is
 * posted twice, the ledger equals the balances (none negative), value is conserved, every transaction's terminal event is in the outbox,
 * relayed and queued for the dispatcher, and an Idempotency-Key replay answers what the first call did.
 * Bounded: one budget for the run, and afterAll kills every child it started.
 */
// The issue's figure, run by CI: 2,000 transactions.
const TOTAL = Number(process.env.CHAOS_TRANSACTIONS ?? 2_000);
const KILLS = Number(process.env.CHAOS_WORKER_KILLS ?? 4);
const SEED = Number(process.env.CHAOS_SEED ?? 1795290017);
const WALLETS = 8;
const PARALLEL = 8;
/** The sweeper runs every SWEEP_INTERVAL_MS for in-flight transactions untouched for SWEEP_AFTER_MS. */
const SWEEP_AFTER_MS = 2_000;
const SWEEP_INTERVAL_MS = 500;
/**
 * A step that was running when the worker died stays `active` in BullMQ until its lock (15 s in the custody
 * worker) expires and the second stalled-job check after that (every 5 s) moves it back; a step whose job was
 * lost is re-driven by the sweeper. So the drain after the last restart never goes this long without a
 * transaction ending terminal.
 */
const STUCK_BOUND_MS = 15_000 + 2 * 5_000 + SWEEP_AFTER_MS + SWEEP_INTERVAL_MS + 10_000;
/** The run's whole budget: the load, the kills and the drain (longer for larger runs). */
const BUDGET_MS = Math.max(240_000, TOTAL * 300);

let env: TestEnvironment;
let vars: Record<string, string>;
let api: ServiceProcess | undefined;
let worker: ServiceProcess | undefined;
let probe: SqlProbe | undefined;
const started: ServiceProcess[] = [];
/** The tail of the workers' stderr (warn and above), shown when a transaction is stuck. */
let workerLog = '';
const keepLog = (p: ServiceProcess) =>
  p.child.stderr!.on('data', (d: Buffer) => (workerLog = (workerLog + d.toString()).slice(-20_000)));

beforeAll(async () => {
  assertBuilt();
  env = await createTestEnvironment([migrator]);
  vars = chaosEnv(env, {
    CHAIN_SIM_FAIL_DESTINATIONS: BOOK_FAILS,
    CUSTODY_SWEEP_AFTER_MS: String(SWEEP_AFTER_MS),
    CUSTODY_SWEEP_INTERVAL_MS: String(SWEEP_INTERVAL_MS),
  });
  api = await startApiProcess(vars);
  started.push(api);
  probe = await openSqlProbe(env.db.url, 'custody');
}, 60_000);

afterAll(async () => {
  for (const p of started) await kill9(p.child);
  await probe?.close();
  await env?.teardown();
}, 30_000);

interface Op {
  kind: 'deposit' | 'transfer' | 'withdraw';
  path: string;
  body: Record<string, unknown>;
  key?: string;
  answer?: HttpAnswer;
}

function plan(wallets: string[]): Op[] {
  const random = seededRandom(SEED);
  const pick = () => wallets[Math.floor(random() * wallets.length)]!;
  return Array.from({ length: TOTAL }, (_, i): Op => {
    const amount = sats(1 + Math.floor(random() * 5_000_000));
    const r = random();
    if (r < 0.3) return { kind: 'deposit', path: '/sandbox/deposits', body: { walletId: pick(), amount } };
    const key = `chaos-${SEED}-${i}`;
    if (r < 0.7) {
      return {
        kind: 'transfer',
        path: '/transactions/transfer',
        body: { sourceWalletId: pick(), destinationWalletId: pick(), amount, note: `op ${i}` },
        key,
      };
    }
    return {
      kind: 'withdraw',
      path: '/transactions/withdraw',
      body: {
        sourceWalletId: pick(),
        destinationAddress: random() < 0.2 ? BOOK_FAILS : BOOK_OK,
        amount,
        note: `op ${i}`,
      },
      key,
    };
  });
}

const send = (client: SignedHttpClient, op: Op) =>
  client.post(op.path, op.body, op.key ? { 'idempotency-key': op.key } : {});

it(
  `${TOTAL} transactions across ${KILLS} kill -9 of the custody worker: none stuck, posted once, ledger = balances, no event lost`,
  async () => {
    const t0 = Date.now();
    const deadline = t0 + BUDGET_MS;
    const moments = seededPercents(SEED, KILLS, 5, 85);
    process.stdout.write(
      `chaos custody worker: seed ${SEED}, ${TOTAL} transactions, kills at ${moments.join('%, ')}% of the requests\n`,
    );
    worker = await startWorkerProcess(vars);
    started.push(worker);
    keepLog(worker);
    const key = await createTenantKey(api!.port);
    const client = signedClient(api!.port, key);
    const wallets: string[] = [];
    for (let i = 0; i < WALLETS; i++) {
      // One wallet per asset in a vault: a vault each.
      const vault = await client.post('/vaults', { externalId: `chaos-${i}`, name: `Chaos ${i}` });
      expect(vault.status).toBe(201);
      const w = await client.post(`/vaults/${vault.body.id}/wallets`, { assetId: BTC, label: `w${i}` });
      expect(w.status).toBe(201);
      wallets.push(w.body.walletId);
    }
    for (const address of [BOOK_OK, BOOK_FAILS]) {
      const entry = await client.post('/address-book', { assetId: BTC, address, label: address.slice(0, 8) });
      expect(entry.status).toBe(201);
    }

    // Funded before the chaos starts (a credit waits for the worker), so most transfers and withdrawals pass.
    const funding = await runBounded(wallets.length, PARALLEL, (i) =>
      client.post('/sandbox/deposits', { walletId: wallets[i], amount: '2' }),
    );
    expect(funding.map((res) => res.status)).toEqual(wallets.map(() => 201));
    const credited = async () =>
      (
        await probe!.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM transactions WHERE type = 'Deposit' AND status = 'Completed'`,
        )
      )[0]!.n;
    while ((await credited()) < wallets.length) {
      if (Date.now() > deadline) throw new Error('the funding deposits did not complete');
      await new Promise((r) => setTimeout(r, 100));
    }
    const ops = plan(wallets);
    let answered = 0;
    let loadDone = false;
    let kills = 0;
    let lastRestart = Date.now();
    // The chaos loop: at each seeded moment (a share of the answered requests), kill -9 and start again.
    const chaos = (async () => {
      for (const percent of moments) {
        while (answered < (TOTAL * percent) / 100 && !loadDone) await new Promise((r) => setTimeout(r, 20));
        await kill9(worker!.child);
        kills++;
        worker = await startWorkerProcess(vars);
        started.push(worker);
        keepLog(worker);
        lastRestart = Date.now();
      }
    })();
    await runBounded(ops.length, PARALLEL, async (i) => {
      ops[i]!.answer = await send(client, ops[i]!);
      if (++answered % 500 === 0) {
        process.stdout.write(`chaos custody worker: ${answered}/${TOTAL} answered, ${kills} kills so far\n`);
      }
    });
    loadDone = true;
    await chaos;
    const loadMs = Date.now() - t0;

    // The API never saw the worker die: every answer is a 201 or a refusal in the contract's shape.
    const statuses = new Map<number, number>();
    for (const op of ops) statuses.set(op.answer!.status, (statuses.get(op.answer!.status) ?? 0) + 1);
    const unexpected = ops.filter((op) => op.answer!.status !== 201 && op.answer!.status !== 400);
    expect(unexpected.map((op) => `${op.answer!.status} ${op.answer!.text}`)).toEqual([]);
    for (const op of ops.filter((o) => o.answer!.status === 400)) {
      expect(Object.keys(op.answer!.body).sort()).toEqual(
        op.answer!.body.errors ? ['errors', 'message'] : ['message'],
      );
    }
    const created = ops.filter((op) => op.answer!.status === 201);
    expect(created.length).toBeGreaterThan(TOTAL / 2);
    expect(kills).toBe(KILLS);

    // None stuck: every transaction ends terminal. A large run leaves a backlog of queued steps that the worker
    // drains at its own pace; what would be stuck is a transaction the machine stops moving, so the drain must
    // never go STUCK_BOUND_MS without finishing one more transaction (the sweeper's bound), and must finish
    // within the run's budget (polled with one SQL count).
    const inFlight = () =>
      probe!
        .query<{ n: number }>(
          `SELECT count(*)::int AS n FROM transactions WHERE status NOT IN ('Completed', 'Failed', 'Cancelled')`,
        )
        .then(([row]) => row!.n);
    let left = await inFlight();
    let lastProgress = Math.max(Date.now(), lastRestart);
    while (left > 0 && Date.now() < deadline && Date.now() - lastProgress < STUCK_BOUND_MS) {
      await new Promise((r) => setTimeout(r, 250));
      const now = await inFlight();
      if (now < left) lastProgress = Date.now();
      left = now;
    }
    const drainedMs = Date.now() - Math.max(t0 + loadMs, lastRestart);
    if (left > 0) {
      const stuck = await probe!.query(
        `SELECT type, status, count(*)::int AS n, min(now() - updated_at)::text AS youngest FROM transactions
       WHERE status NOT IN ('Completed', 'Failed', 'Cancelled') GROUP BY type, status`,
      );
      const oldest = await probe!.query<{ id: string; status: string }>(
        `SELECT id, status FROM transactions WHERE status NOT IN ('Completed', 'Failed', 'Cancelled')
       ORDER BY updated_at LIMIT 10`,
      );
      const jobs = new Queue(JOBS.CUSTODY_TRANSACTION_ADVANCE.queue, {
        connection: { url: env.env.REDIS_URL } as never,
        prefix: bullPrefix(env.env.QUEUE_PREFIX!),
      });
      const states = await Promise.all(oldest.map((t) => jobs.getJobState(`adv-${t.id}-${t.status}`)));
      const counts = await jobs.getJobCounts();
      await jobs.close();
      process.stdout.write(
        `chaos custody worker: stuck ${JSON.stringify(stuck)}; oldest steps' jobs ${JSON.stringify(states)}; ` +
          `queue ${JSON.stringify(counts)}\nworker log: ${workerLog.slice(-4000)}\n`,
      );
    }
    expect(left).toBe(0);

    // Exactly the transactions the API acknowledged exist, no more (no double creation).
    const ids = [
      ...funding.map((res) => res.body.transactionId as string),
      ...created.map((op) => op.answer!.body.transactionId as string),
    ];
    expect(new Set(ids).size).toBe(ids.length);
    const [{ n: stored }] = await probe!.query<{ n: number }>(`SELECT count(*)::int AS n FROM transactions`);
    expect(stored).toBe(ids.length);
    const [{ n: known }] = await probe!.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM transactions WHERE id = ANY($1::uuid[])`,
      [ids],
    );
    expect(known).toBe(ids.length);

    // Posted once: no (transaction, wallet, kind) has two ledger entries.
    const doubles = await probe!.query(
      `SELECT transaction_id, wallet_id, kind, count(*)::int AS n FROM ledger_entries
     GROUP BY transaction_id, wallet_id, kind HAVING count(*) > 1`,
    );
    expect(doubles).toEqual([]);
    // Every terminal effect is there: a completed deposit has its credit, a failed withdrawal its release.
    const missingEffects = await probe!.query(
      `SELECT t.id, t.type, t.status FROM transactions t WHERE NOT EXISTS (
       SELECT 1 FROM ledger_entries e WHERE e.transaction_id = t.id AND e.kind = CASE
         WHEN t.type = 'Deposit' AND t.status = 'Completed' THEN 'deposit-credit'
         WHEN t.type = 'Deposit' THEN 'deposit-drop'
         WHEN t.type = 'Withdrawal' AND t.status = 'Completed' THEN 'post'
         WHEN t.type = 'Withdrawal' THEN 'release'
         WHEN t.status = 'Completed' THEN 'transfer-in'
         ELSE 'transfer-reversal-in' END)`,
    );
    expect(missingEffects).toEqual([]);

    // The ledger equals the balances; nothing negative; nothing left pending or locked once all is terminal.
    const mismatches = await probe!.query(
      `SELECT b.wallet_id FROM balances b
     LEFT JOIN (SELECT wallet_id, sum(total_delta) t, sum(available_delta) a, sum(pending_delta) p,
                       sum(locked_delta) l FROM ledger_entries GROUP BY wallet_id) e ON e.wallet_id = b.wallet_id
     WHERE b.total <> coalesce(e.t, 0) OR b.available <> coalesce(e.a, 0) OR b.pending <> coalesce(e.p, 0)
        OR b.locked <> coalesce(e.l, 0) OR b.available < 0 OR b.total < 0 OR b.locked <> 0 OR b.pending <> 0`,
    );
    expect(mismatches).toEqual([]);
    const [conservation] = await probe!.query<{ held: string; inflow: string; outflow: string }>(
      `SELECT (SELECT coalesce(sum(total), 0)::text FROM balances) AS held,
            (SELECT coalesce(sum(amount), 0)::text FROM transactions WHERE type = 'Deposit' AND status = 'Completed') AS inflow,
            (SELECT coalesce(sum(amount), 0)::text FROM transactions WHERE type = 'Withdrawal' AND status = 'Completed') AS outflow`,
    );
    expect(BigInt(conservation!.held)).toBe(BigInt(conservation!.inflow) - BigInt(conservation!.outflow));

    // No event lost: each transaction has exactly one terminal status event, and the relay has sent every
    // outbox row to the dispatcher's queue (the relay takes a row off the pending queue only in the transaction that enqueued it).
    const unrelayed = () =>
      probe!.query<{ n: number }>(`SELECT count(*)::int AS n FROM outbox_pending`).then(([row]) => row!.n);
    let pending = await unrelayed();
    while (pending > 0 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 250));
      pending = await unrelayed();
    }
    expect(pending).toBe(0);
    const withoutTerminalEvent = await probe!.query(
      `SELECT t.id, t.status FROM transactions t WHERE (
       SELECT count(*) FROM outbox o WHERE o.entity_id = t.id::text
         AND o.event_type = 'transaction.status.updated' AND o.data->>'status' = t.status) <> 1`,
    );
    expect(withoutTerminalEvent).toEqual([]);
    const outboxIds = (await probe!.query<{ id: string }>(`SELECT id FROM outbox`)).map((r) => r.id);
    const events = new Queue(JOBS.WEBHOOK_EVENTS.queue, {
      connection: { url: env.env.REDIS_URL } as never,
      prefix: bullPrefix(env.env.QUEUE_PREFIX!),
    });
    try {
      // The relay enqueues `webhook.events.v1` jobs of up to 100 events (decision 0402).
      const jobs = await events.getJobs(
        ['waiting', 'active', 'delayed', 'prioritized', 'completed', 'failed'],
        0,
        -1,
      );
      const queued = new Set(
        jobs.flatMap((j) => (j.data as { events: { eventId: string }[] }).events.map((e) => e.eventId)),
      );
      expect(outboxIds.filter((id) => !queued.has(id))).toEqual([]);
    } finally {
      await events.close();
    }

    // Idempotency across the kills: replaying a sample of acknowledged requests with their keys answers the
    // stored response and creates nothing.
    const replays = created.filter((op) => op.key).filter((_, i) => i % 10 === 0);
    const again = await runBounded(replays.length, PARALLEL, (i) => send(client, replays[i]!));
    again.forEach((res, i) => {
      expect(res.status).toBe(201);
      expect(res.body).toEqual(replays[i]!.answer!.body);
    });
    const [{ n: after }] = await probe!.query<{ n: number }>(`SELECT count(*)::int AS n FROM transactions`);
    expect(after).toBe(ids.length);

    const [{ entries }] = await probe!.query<{ entries: number }>(
      `SELECT count(*)::int AS entries FROM ledger_entries`,
    );
    process.stdout.write(
      `chaos custody worker: ${TOTAL} requests (${[...statuses].map(([s, n]) => `${n}×${s}`).join(', ')}), ` +
        `${ids.length} transactions (${WALLETS} funding deposits first), ${kills} kills, ${kills} restarts, 0 stuck, 0 double postings, ` +
        `${entries} ledger entries, ${outboxIds.length} events relayed, ${replays.length} replays, 0 5xx; ` +
        `load ${loadMs} ms, all terminal ${drainedMs} ms after the load and the last restart, ` +
        `${Date.now() - t0} ms in all\n`,
    );
  },
  BUDGET_MS + 60_000,
);
