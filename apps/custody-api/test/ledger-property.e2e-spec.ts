import { SETUP_HOOK_TIMEOUT_MS } from '@tessera/testing';
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

const BOOK_OK = 'tb1qw508d6qejxtdg4y5r3zarvary0c5xw7kxpjzsx';
const BOOK_FAILS = 'tb1qrp33g0q5c5txsp9arysrx4k6zdkfs4nce4xj0gdcccefvpysxf3q0sl5k7';
const OPERATIONS = 2000;
const WALLETS = 6;
const PARALLEL = 8;
/**
 * The run is bounded by progress, not by a total: it fails once no request has answered (or, afterwards, no
 * transaction has settled) for this long. The total depends on the machine: about 50 s alone, 110 s with two
 * busy loops beside it, and several times that when CI runs two packages' suites at once on two cores.
 */
const STALL_MS = 60_000;
/** A ceiling for a run that is slow but never stalls. */
const TEST_TIMEOUT_MS = 600_000;

/** Deterministic PRNG (mulberry32) so a failure can be replayed. */
function prng(seed: number) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const sats = (n: number) => {
  const s = String(n).padStart(9, '0');
  return `${s.slice(0, -8)}.${s.slice(-8)}`;
};

let h: Harness;
let api: Client;

beforeAll(async () => {
  h = await startHarness({
    CHAIN_SIM_FAIL_DESTINATIONS: BOOK_FAILS,
    CHAIN_SIM_STEP_DELAY_MS: '2',
    DB_POOL_SIZE: '10',
  });
  api = client(h.api, await createKey(h.api, await createTenant(h.api)));
  for (const address of [BOOK_OK, BOOK_FAILS]) {
    await api.post('/address-book', { assetId: ASSETS.BTC, address, label: address.slice(0, 8) }).expect(201);
  }
}, SETUP_HOOK_TIMEOUT_MS);
afterAll(() => h?.close());

/** Settles once every worker is done; fails as soon as `STALL_MS` passes with no progress reported. */
function progressWatch() {
  let last = Date.now();
  let timer: NodeJS.Timeout | undefined;
  const stalled = new Promise<never>((_, reject) => {
    timer = setInterval(() => {
      if (Date.now() - last > STALL_MS) reject(new Error(`no progress for ${STALL_MS} ms`));
    }, 1000);
  });
  return {
    progressed: () => (last = Date.now()),
    within: async <T>(work: Promise<T>): Promise<T> => {
      try {
        return await Promise.race([work, stalled]);
      } finally {
        clearInterval(timer);
      }
    },
  };
}

it(
  `after ${OPERATIONS} random transfers, deposits and withdrawals the ledger sums equal every balance and value is conserved`,
  async () => {
    const seed = Number(process.env.LEDGER_SEED ?? 20261121);
    const random = prng(seed);
    const wallets: string[] = [];
    for (let i = 0; i < WALLETS; i++) wallets.push((await fundedWallet(api, ASSETS.BTC, undefined)).walletId);
    const pick = () => wallets[Math.floor(random() * wallets.length)];
    const ops = Array.from({ length: OPERATIONS }, () => {
      const r = random();
      const amount = sats(1 + Math.floor(random() * 5_000_000));
      if (r < 0.35) return () => api.post('/sandbox/deposits', { walletId: pick(), amount });
      if (r < 0.75) {
        const [s, d] = [pick(), pick()];
        return () =>
          api.post(
            '/transactions/transfer',
            { sourceWalletId: s, destinationWalletId: d, amount },
            { 'idempotency-key': newIdempotencyKey() },
          );
      }
      const destination = random() < 0.2 ? BOOK_FAILS : BOOK_OK;
      return () =>
        api.post(
          '/transactions/withdraw',
          { sourceWalletId: pick(), destinationAddress: destination, amount },
          { 'idempotency-key': newIdempotencyKey() },
        );
    });
    const statuses: number[] = [];
    let next = 0;
    const requests = progressWatch();
    await requests.within(
      Promise.all(
        Array.from({ length: PARALLEL }, async () => {
          while (next < ops.length) {
            const res = await ops[next++]();
            requests.progressed();
            statuses.push(res.status);
            if (res.status !== 201 && res.status !== 400)
              throw new Error(`unexpected ${res.status}: ${res.text}`);
          }
        }),
      ),
    );
    expect(statuses.filter((s) => s === 201).length).toBeGreaterThan(OPERATIONS / 2);

    // Every transaction reaches a terminal state: polled while the count of those in flight keeps going down.
    const settling = progressWatch();
    let inFlight = Infinity;
    await settling.within(
      waitFor(
        async () => {
          const [row] = await sql<{ n: number }>(
            h,
            `SELECT count(*)::int AS n FROM transactions WHERE status NOT IN ('Completed', 'Failed', 'Cancelled')`,
          );
          if (row.n < inFlight) settling.progressed();
          inFlight = row.n;
          return row.n;
        },
        (n) => n === 0,
        TEST_TIMEOUT_MS,
      ),
    );

    const mismatches = await sql(
      h,
      `SELECT b.wallet_id FROM balances b
     LEFT JOIN (SELECT wallet_id, sum(total_delta) t, sum(available_delta) a, sum(pending_delta) p,
                       sum(locked_delta) l FROM ledger_entries GROUP BY wallet_id) e ON e.wallet_id = b.wallet_id
     WHERE b.total <> coalesce(e.t, 0) OR b.available <> coalesce(e.a, 0) OR b.pending <> coalesce(e.p, 0)
        OR b.locked <> coalesce(e.l, 0) OR b.available < 0 OR b.locked <> 0 OR b.pending <> 0`,
    );
    expect(mismatches).toEqual([]);
    const [conservation] = await sql<{ held: string; inflow: string; outflow: string }>(
      h,
      `SELECT (SELECT sum(total)::text FROM balances) AS held,
            (SELECT coalesce(sum(amount), 0)::text FROM transactions WHERE type = 'Deposit' AND status = 'Completed') AS inflow,
            (SELECT coalesce(sum(amount), 0)::text FROM transactions WHERE type = 'Withdrawal' AND status = 'Completed') AS outflow`,
    );
    expect(BigInt(conservation.held)).toBe(BigInt(conservation.inflow) - BigInt(conservation.outflow));
    const [failed] = await sql<{ n: number }>(
      h,
      `SELECT count(*)::int AS n FROM transactions WHERE status = 'Failed'`,
    );
    expect(failed.n).toBeGreaterThan(0);
  },
  TEST_TIMEOUT_MS,
);
