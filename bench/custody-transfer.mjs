#!/usr/bin/env node
// Bench "custody": POST /transactions/transfer of custody-api between 10 funded hot wallets, every request
// signed by libs/auth with a fresh Idempotency-Key, at each connection count of the scale curve, beside the bare
// Fastify single INSERT … RETURNING in the same run on the same Postgres; then with 1 million transactions
// preloaded (bench/seed-scale.mjs) in a second deployment, measured in alternating slices with the same figure
// on the empty tables. After each point it checks for anomalies: non-2xx answers, ledger sums against
// balances, negative balances, conservation of the total, transactions created versus 201 answers.
//
//   pnpm build && node bench/custody-transfer.mjs [--duration 5] [--connections 10,50,200] [--no-preload]
//
// The API runs as production does (node apps/custody-api/dist/main.js) with the per-key rate limit raised and
// request logging off. The worker (dist/worker.js) does not run during the measured points: it funds the
// wallets, and after each empty-table point a worker started for the purpose takes the point's backlog for
// `--duration` seconds: the transfers it moves to Completed per second (each one four steps of the state
// machine, with its events relayed) are the figure "custody worker", beside the rate the API accepted them.
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { standalone } from './lib/bench.mjs';
import { startBaselineServer, measureInsert } from './lib/baselines.mjs';
import { interleaved, measure } from './lib/load.mjs';
import { DEPLOYED_LOGGING, freePort, postgresCpu, requireFrom, root, startServer } from './lib/proc.mjs';
import { against, figure, progress, rowsLabel } from './lib/report.mjs';
import { explainHotPaths, seed } from './seed-scale.mjs';

const appRequire = requireFrom('apps/custody-api');
const { Client } = appRequire('pg');
const { signRequest } = appRequire('@tessera/auth');
const BTC = 'a0000000-0000-4000-8000-000000000001';
const WALLETS = 10;
const FUNDING = '1000';
/** Signed requests prepared per second of a run (more than the API answers here; extra ones are signed live). */
const PRESIGNED_PER_SECOND = 20_000;
/** Requests signed with one millisecond timestamp, each for another wallet pair (at most 90 with 10 wallets). */
const SIGNED_PER_MS = 20;
/** A transfer's statuses in the order the state machine moves it (its step number is the index). */
const STEPS = ['Submitted', 'PendingSignature', 'Broadcasting', 'Confirming', 'Completed'];

async function sql(url, text, params = []) {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(text, params)).rows;
  } finally {
    await client.end();
  }
}

/** Anomalies of the ledger (each a count; 0 is clean). */
async function ledgerAnomalies(url) {
  const [r] = await sql(
    url,
    `SELECT
      (SELECT count(*)::int FROM custody.balances b
         LEFT JOIN (SELECT wallet_id, sum(total_delta) t, sum(available_delta) a FROM custody.ledger_entries
                    GROUP BY wallet_id) e ON e.wallet_id = b.wallet_id
         WHERE b.total <> coalesce(e.t, 0) OR b.available <> coalesce(e.a, 0)) AS "ledgerMismatches",
      (SELECT count(*)::int FROM custody.balances WHERE available < 0) AS "negativeBalances",
      (SELECT sum(total)::text FROM custody.balances) AS "totalHeld"`,
  );
  const expected = String(BigInt(FUNDING) * 100_000_000n * BigInt(WALLETS));
  return {
    ledgerMismatches: r.ledgerMismatches,
    negativeBalances: r.negativeBalances,
    totalNotConserved: r.totalHeld === expected ? 0 : 1,
  };
}

export const bench = {
  name: 'custody',
  description: 'custody-api transfer (10 hot wallets) vs bare Fastify INSERT',
  async run(ctx) {
    const figures = [];
    const empty = await deployment('empty');
    let scale = null;
    let baseline = null;
    try {
      baseline = await startBaselineServer(empty.url, { pool: 20 });
      const insertBody = () => ({
        sourceWalletId: empty.wallets[0],
        destinationWalletId: empty.wallets[1],
        amount: '0.00000001',
      });
      const insert = {
        label: 'baseline INSERT',
        run: (c, s, o) => measureInsert(baseline, { connections: c, duration: s, body: insertBody }, o),
      };
      // A point: two sides in alternating slices (load.mjs interleaved); then each deployment's transfers are
      // counted against its 201 answers and its ledger is checked (`anomalies` on each transfer result).
      const point = async (c, sides) => {
        const runs = sides.map((side) => side.deployment?.nextRun());
        const results = await interleaved(
          sides.map((side, i) => ({
            label: side.label,
            connections: c,
            run: (s, o) => side.run(c, s, o, runs[i]),
          })),
          ctx.duration,
        );
        for (const [i, side] of sides.entries())
          if (side.deployment) results[i].anomalies = await side.deployment.anomalies(results[i], runs[i], c);
        return results;
      };

      const emptyAt = {};
      for (const c of ctx.connections) {
        progress(`custody: ${c} connections`);
        const [base, r] = await point(c, [insert, empty.transfer]);
        emptyAt[c] = r;
        const worker = await empty.completions(ctx.duration);
        figures.push(
          figure({
            key: `custody.complete.c${c}`,
            bench: 'custody',
            series: 'complete',
            connections: c,
            rows: 'empty',
            figure: `custody worker, transfers completed (${c}-conn backlog)`,
            unit: 'transfers/s',
            value: worker.reqPerSec,
            baseline: r.reqPerSec,
            baselineLabel: 'accepted',
            cpuMsPerReq: worker.cpuMsPerReq,
            postgresCpuMsPerReq: worker.postgresCpuMsPerReq,
            backlogLeft: worker.backlog,
            goal: { ratioAtLeast: 1 },
          }),
        );
        figures.push(
          figure({
            key: `custody.transfer.c${c}`,
            bench: 'custody',
            series: 'transfer',
            connections: c,
            rows: 'empty',
            figure: `custody transfer (10 hot wallets), ${c} conn`,
            unit: 'req/s',
            ...against(r, base, 'INSERT'),
            goal: { ratioAtLeast: 0.8, zeroAnomalies: true },
          }),
        );
      }
      await baseline.stop();
      baseline = null;

      if (ctx.preload) {
        // A second deployment on its own database holds the million rows; each preloaded point runs in
        // alternating slices with the same point on the empty tables, so both see the same machine.
        scale = await deployment('preloaded');
        // The empty-table API has been warmed by the whole empty phase; warm this one's JIT as long.
        progress('custody: warming the preloaded deployment');
        for (const c of ctx.connections)
          await scale.transfer.run(c, ctx.duration, { warmSeconds: 1, quiet: true }, scale.nextRun());
        const seeded = await seed(scale.url, 'transactions', ctx.rows);
        figures.push(
          figure({
            key: 'custody.seed',
            bench: 'custody',
            figure: `seed ${ctx.rows.toLocaleString('en')} transactions (COPY)`,
            unit: 's',
            value: seeded.seconds,
            rowsSeeded: seeded.rows,
            explain: await explainHotPaths(scale.url, 'transactions'),
          }),
        );
        const preloaded = { ...scale.transfer, label: `${scale.transfer.label}, ${rowsLabel(ctx.rows)}` };
        for (const c of ctx.connections) {
          progress(`custody: ${c} connections, ${ctx.rows.toLocaleString('en')} transactions preloaded`);
          const [e, r] = await point(c, [empty.transfer, preloaded]);
          figures.push(
            figure({
              key: `custody.transfer.c${c}.preloaded`,
              bench: 'custody',
              series: 'transfer',
              connections: c,
              rows: ctx.rows,
              figure: `custody transfer, ${c} conn, ${rowsLabel(ctx.rows)}`,
              unit: 'req/s',
              ...against(r, e, 'empty'),
              goal: { ratioAtLeast: 0.8, p99AtMostBaselineTimes: 1.5, zeroAnomalies: true },
            }),
          );
        }
      }
    } finally {
      await baseline?.stop();
      await scale?.stop();
      await empty.stop();
    }
    return figures;
  },
};

/**
 * custody-api on a database of its own (migrated): a tenant, its key, 10 hot wallets funded by the worker, and
 * the two completed transfers the seeding copies. `transfer` is the measured side
 * ({ label, deployment, run(connections, seconds, measureOpts, run) }); `anomalies(result, run, connections)`
 * counts what a point of it left wrong.
 */
async function deployment(name) {
  const testing = appRequire('@tessera/testing');
  const { databaseOptions } = appRequire('./dist/database/database');
  const testEnv = await testing.createTestEnvironment([
    testing.migratorFor(databaseOptions, join(root, 'apps/custody-api/src/database/migrations')),
  ]);
  const url = testEnv.env.DATABASE_URL;
  const servers = [];
  const stop = async () => {
    for (const s of servers.reverse()) await s.stop();
    await testEnv.teardown();
  };
  try {
    const common = {
      ...testEnv.env,
      ...DEPLOYED_LOGGING,
      NODE_ENV: 'production',
      CUSTODY_RATE_LIMIT_PER_KEY: '100000000',
      DB_POOL_SIZE: '20',
      CHAIN_SIM_STEP_DELAY_MS: '0',
      CHAIN_SIM_BLOCK_MS: '0',
    };
    const suffix = name === 'empty' ? '' : `-${name}`;
    const apiPort = await freePort();
    const api = await startServer(`custody-api${suffix}`, join(root, 'apps/custody-api/dist/main.js'), {
      env: { ...common, PORT: String(apiPort) },
      readyUrl: `http://127.0.0.1:${apiPort}/health`,
      profile: true,
    });
    servers.push(api);
    const startWorker = async () => {
      const workerPort = await freePort();
      const worker = await startServer(
        `custody-worker${suffix}`,
        join(root, 'apps/custody-api/dist/worker.js'),
        {
          env: { ...common, WORKER_PORT: String(workerPort) },
          readyUrl: `http://127.0.0.1:${workerPort}/health`,
          profile: true,
        },
      );
      servers.push(worker);
      return worker;
    };
    const worker = await startWorker();
    const adminPost = async (path, body) => {
      const res = await fetch(api.url + path, {
        method: 'POST',
        headers: { authorization: `Bearer ${testEnv.env.ADMIN_TOKEN}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      if (res.status !== 201) throw new Error(`${path}: ${res.status} ${await res.text()}`);
      return res.json();
    };
    const tenant = await adminPost('/admin/tenants', { name: 'Bench' });
    const key = await adminPost(`/admin/tenants/${tenant.id}/keys`, {
      environment: 'test',
      scopes: ['vaults:write', 'wallets:create', 'transfers:write', 'transactions:read', 'sandbox:write'],
    });
    const signed = async (method, path, body, headers = {}) => {
      const raw = body === undefined ? '' : JSON.stringify(body);
      const res = await fetch(api.url + path, {
        method,
        headers: {
          ...signRequest(key.apiKey, key.apiSecret, { method, pathWithQuery: path, body: raw }),
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
          ...headers,
        },
        body: body === undefined ? undefined : raw,
      });
      if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
      return res.json();
    };
    const settled = async () => {
      for (let i = 0; i < 600; i++) {
        const [{ n }] = await sql(
          url,
          `SELECT count(*)::int AS n FROM custody.transactions WHERE status <> 'Completed'`,
        );
        if (n === 0) return;
        await sleep(100);
      }
      throw new Error('funding did not complete');
    };
    progress(`custody (${name}): funding ${WALLETS} hot wallets`);
    const wallets = [];
    for (let i = 0; i < WALLETS; i++) {
      const vault = await signed('POST', '/vaults', { externalId: `hot-${i}`, name: `Hot ${i}` });
      const wallet = await signed('POST', `/vaults/${vault.id}/wallets`, { assetId: BTC });
      await signed('POST', '/sandbox/deposits', { walletId: wallet.walletId, amount: FUNDING });
      wallets.push(wallet.walletId);
    }
    await settled();
    // The two seeding templates (wallet 0 → 1 and back), completed by the worker like any transfer.
    for (const [i, [s, d]] of [
      [0, 1],
      [1, 0],
    ].entries())
      await signed(
        'POST',
        '/transactions/transfer',
        { sourceWalletId: wallets[s], destinationWalletId: wallets[d], amount: '0.00000001' },
        { 'idempotency-key': `seed-template-${i}` },
      );
    await settled();
    await worker.stop();
    servers.pop();

    // Every ordered pair of distinct hot wallets, in a random order. Request `seq` takes pair
    // `seq % pairs.length`: the requests that share a millisecond timestamp are consecutive, so each has another
    // pair and no two share a signature (the replay cache refuses a repeated timestamp and signature).
    const pairs = wallets
      .flatMap((s) => wallets.filter((d) => d !== s).map((d) => [s, d]))
      .map((pair) => [Math.random(), pair])
      .sort(([x], [y]) => x - y)
      .map(([, pair]) => pair);
    if (pairs.length < SIGNED_PER_MS) throw new Error('fewer wallet pairs than requests per millisecond');
    const transferRequest = (seq, run) => {
      const timestampMs = Math.floor(seq / SIGNED_PER_MS);
      const [source, destination] = pairs[seq % pairs.length];
      const body = JSON.stringify({
        sourceWalletId: source,
        destinationWalletId: destination,
        amount: '0.00000001',
      });
      return {
        method: 'POST',
        path: '/transactions/transfer',
        body,
        headers: {
          'content-type': 'application/json',
          'idempotency-key': `${run}-${randomUUID()}`,
          ...signRequest(key.apiKey, key.apiSecret, {
            method: 'POST',
            pathWithQuery: '/transactions/transfer',
            body,
            timestamp: String(timestampMs),
          }),
        },
      };
    };
    // Requests are signed before each run, so the load generator's HMAC work does not compete with the API
    // for the CPU. SIGNED_PER_MS requests share each millisecond timestamp, from now - 20 s on, used oldest
    // first, so at PRESIGNED_PER_SECOND the timestamps keep pace with the clock and stay inside the 30 s drift;
    // requests beyond the pool are signed live and advance the timestamps as fast. (Before 2026-11-26 each
    // request had a millisecond of its own: the timestamps ran ahead of the clock by a second per thousand
    // requests, out of the drift window on a fast machine, and every later request answered 401.)
    let nextSeq = 0;
    // Every run's idempotency keys share a prefix, so the transfers it created are counted exactly (the key
    // is written in the transfer's own statement), whatever the warm-up or an earlier run still has in flight.
    const signedRequests = (seconds, run) => {
      const count = Math.ceil(seconds * PRESIGNED_PER_SECOND);
      const start = Math.max(nextSeq, (Date.now() - 20_000) * SIGNED_PER_MS);
      nextSeq = start + count;
      const pool = Array.from({ length: count }, (_, i) => transferRequest(start + i, run));
      let next = 0;
      return [
        {
          setupRequest: (req) => ({ ...req, ...(pool[next++] ?? transferRequest(nextSeq++, run)) }),
        },
      ];
    };
    const transfersOf = async (run) =>
      (
        await sql(
          url,
          `SELECT count(*)::int AS n FROM custody.idempotency_keys k
           JOIN custody.transactions t ON t.id = (k.response->>'transactionId')::uuid
           WHERE k.endpoint = 'transfer' AND starts_with(k.key, $1)`,
          [`${run}-`],
        )
      )[0].n;
    /**
     * A worker started on the backlog the last point left. A transfer is four steps of the state machine
     * (Submitted → PendingSignature → Broadcasting → Confirming → Completed), each queued behind the backlog's
     * other steps, so the first ones complete only once most of the backlog has taken three: the figure counts
     * steps, not completions. Once its relay has taken the point's events (and so queued each first step),
     * the steps taken in `seconds` (the rise of the sum of
     * each transfer's step number) ÷ 4 are its transfers per second, with its CPU and Postgres' per transfer
     * over the same window (the relay takes each step's events meanwhile). Stopped again before the next point.
     */
    const completions = async (seconds) => {
      const client = new Client({ connectionString: url });
      await client.connect();
      const stepsTaken = async () =>
        Number(
          (
            await client.query(
              `SELECT coalesce(sum(array_position($1::text[], status) - 1), 0)::bigint AS n
               FROM custody.transactions WHERE type = 'InternalTransfer'`,
              [STEPS],
            )
          ).rows[0].n,
        );
      // Of the worker's compare-and-set moves, the share Postgres made HOT (decision 0430; the counters lag by
      // up to a second, which a window of several seconds absorbs).
      const updates = async () => {
        const [row] = (
          await client.query(
            `SELECT n_tup_upd::bigint AS "all", n_tup_hot_upd::bigint AS "hot" FROM pg_stat_user_tables
             WHERE relid = 'custody.transactions'::regclass`,
          )
        ).rows;
        return { all: Number(row.all), hot: Number(row.hot) };
      };
      const w = await startWorker();
      try {
        // Its relay first takes the events the point left (tens of thousands): measured after it has.
        for (let i = 0; i < 300; i++) {
          const [{ n }] = (await client.query(`SELECT count(*)::int AS n FROM custody.outbox_pending`)).rows;
          if (n < 1000) break;
          await sleep(100);
        }
        await sleep(500);
        const [s0, cpu0, u0] = [await stepsTaken(), await w.cpuMs(), await updates()];
        const postgresSince = postgresCpu();
        const t0 = performance.now();
        await sleep(seconds * 1000);
        const [s1, cpu1, u1] = [await stepsTaken(), await w.cpuMs(), await updates()];
        const hotShare = (u1.hot - u0.hot) / Math.max(1, u1.all - u0.all);
        const elapsed = (performance.now() - t0) / 1000;
        const postgresMs = postgresSince();
        const transfers = (s1 - s0) / (STEPS.length - 1);
        const [{ n: backlog }] = (
          await client.query(
            `SELECT count(*)::int AS n FROM custody.transactions WHERE status <> ALL($1::text[])`,
            [['Completed', 'Failed', 'Cancelled']],
          )
        ).rows;
        const result = {
          reqPerSec: transfers / elapsed,
          cpuMsPerReq: (cpu1 - cpu0) / Math.max(1, transfers),
          postgresCpuMsPerReq: postgresMs / Math.max(1, transfers),
          backlog,
        };
        progress(
          `  worker (${name}): ${(s1 - s0).toLocaleString('en')} steps in ${elapsed.toFixed(1)} s = ${result.reqPerSec.toFixed(0)} transfers/s, ${result.cpuMsPerReq.toFixed(3)} CPU ms per transfer (Postgres ${result.postgresCpuMsPerReq.toFixed(3)}; ${(100 * hotShare).toFixed(0)} % of row updates HOT), ${backlog} still open` +
            (backlog === 0 ? ' (the backlog ran out: the rate is a lower bound)' : ''),
        );
        return result;
      } finally {
        await client.end();
        await w.stop();
        servers.splice(servers.indexOf(w), 1);
      }
    };
    let runs = 0;
    const self = {
      url,
      wallets,
      completions,
      nextRun: () => `run-${runs++}`,
      transfer: {
        label: 'POST /transactions/transfer',
        run: async (c, s, o, run) => {
          if (o.warmSeconds > 0)
            await measure(
              'warm-up',
              api,
              { url: api.url, connections: c, duration: 1, requests: signedRequests(1, `warm-${run}`) },
              { warmSeconds: 0, quiet: true },
            );
          return measure(
            'POST /transactions/transfer',
            api,
            { url: api.url, connections: c, duration: s, requests: signedRequests(s, run) },
            { warmSeconds: 0, quiet: true },
          );
        },
      },
      /** What one point left wrong: transfers created versus 201 answers, and the ledger. */
      async anomalies(r, run, c) {
        // Requests still in flight when autocannon stopped commit afterwards: wait until the count is still.
        let created = await transfersOf(run);
        for (let i = 0; i < 100; i++) {
          await sleep(200);
          const now = await transfersOf(run);
          if (now === created) break;
          created = now;
        }
        // At most `c` requests were in flight when each slice stopped; they may commit without counting as 2xx.
        const lost = Math.max(0, r.ok2xx - created);
        const extra = created - r.ok2xx > c * r.slices ? created - r.ok2xx - c * r.slices : 0;
        const ledger = await ledgerAnomalies(url);
        const total =
          lost + extra + ledger.ledgerMismatches + ledger.negativeBalances + ledger.totalNotConserved;
        if (total > 0)
          progress(
            `  anomalies (${name}): ${lost} answered 201 but not found, ${extra} found but not answered; ${ledger.ledgerMismatches} ledger mismatches, ${ledger.negativeBalances} negative balances, ${ledger.totalNotConserved} totals not conserved`,
          );
        return total;
      },
      stop,
    };
    self.transfer.deployment = self;
    return self;
  } catch (err) {
    await stop();
    throw err;
  }
}

await standalone(import.meta.url, bench);
