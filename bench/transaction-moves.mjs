// The custody worker's compare-and-set move on `transactions` as its migrations leave the table (decision 0430:
// no index names a column a non-terminal move writes, fillfactor 80), against the same table as it was before
// (`transactions_in_flight_idx (updated_at) WHERE status IN (in-flight)`, fillfactor 100), the baseline. Both
// are copies of custody.transactions made in one fresh database; each round inserts a batch of transfers and
// moves the four batches before it one step each (Submitted → PendingSignature → Broadcasting → Confirming →
// Completed), one statement per step as the worker's group commit writes it, each committed. The variants
// alternate, `--runs` times.
//
//   pnpm build && node bench/transaction-moves.mjs [--rounds 300] [--batch 100] [--runs 3]
import { custodyDatabase, custodyRequire, integerOptions, median, spread } from './lib/one-off.mjs';
import { progress } from './lib/report.mjs';

const { rounds, batch, runs } = integerOptions('transaction-moves.mjs', { rounds: 300, batch: 100, runs: 3 });
const { Client } = custodyRequire('pg');

const STEPS = ['Submitted', 'PendingSignature', 'Broadcasting', 'Confirming', 'Completed'];

/** The table as the migrations leave it (`after`), or as it was before decision 0430 (`before`). */
async function createVariant(client, name, variant) {
  await client.query(`DROP TABLE IF EXISTS ${name}`);
  await client.query(`CREATE TABLE ${name} (LIKE custody.transactions INCLUDING ALL)`);
  const [{ options }] = (
    await client.query(
      `SELECT reloptions AS options FROM pg_class WHERE oid = 'custody.transactions'::regclass`,
    )
  ).rows;
  if (variant === 'after') {
    if (options?.length) await client.query(`ALTER TABLE ${name} SET (${options.join(', ')})`);
    return;
  }
  const unfinished = (
    await client.query(
      `SELECT indexname FROM pg_indexes WHERE schemaname = 'public' AND tablename = $1
       AND indexdef LIKE '%completed_at IS NULL%'`,
      [name],
    )
  ).rows;
  for (const { indexname } of unfinished) await client.query(`DROP INDEX ${indexname}`);
  await client.query(
    `CREATE INDEX ON ${name} (updated_at)
     WHERE status IN ('Submitted', 'PendingSignature', 'Broadcasting', 'Confirming')`,
  );
}

/** One variant's run: µs and WAL bytes per moved row, the share of HOT moves, the heap's size. */
async function run(url, variant) {
  const name = `moves_${variant}`;
  const client = new Client({ connectionString: url });
  await client.connect();
  await createVariant(client, name, variant);
  const ids = [];
  let moveMs = 0;
  let moveWal = 0;
  let moved = 0;
  const lsn = async () => (await client.query('SELECT pg_current_wal_lsn() AS l')).rows[0].l;
  for (let r = 0; r < rounds + STEPS.length - 1; r++) {
    if (r < rounds) {
      const { rows } = await client.query(
        `INSERT INTO ${name} (id, tenant_id, environment, type, status, vault_id, asset_id, wallet_id,
           source_wallet_id, destination_wallet_id, amount, source_address, destination_address, created_at,
           updated_at, event_sequence)
         SELECT gen_random_uuid(), '00000000-0000-0000-0000-000000000001', 'test', 'InternalTransfer', 'Submitted',
           gen_random_uuid(), gen_random_uuid(), gen_random_uuid(), gen_random_uuid(), gen_random_uuid(), 1000,
           'bc1qxy2kgdygjrsqtzq2n0yrf2493p83kkfjhx0wlh', 'bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq', now(),
           now(), 1
         FROM generate_series(1, $1) RETURNING id`,
        [batch],
      );
      ids.push(rows.map((row) => row.id));
    }
    // The batch inserted `step` rounds ago takes its step-th move, the last (terminal) first.
    for (let step = STEPS.length - 1; step >= 1; step--) {
      const batchIds = ids[r - step + 1];
      if (!batchIds) continue;
      const terminal = step === STEPS.length - 1;
      const moves = batchIds.map((id) => ({
        id,
        expected: STEPS[step - 1],
        next: STEPS[step],
        txHash: step === 3 ? `0x${id.replaceAll('-', '')}` : null,
        terminal,
      }));
      const l0 = await lsn();
      const t0 = performance.now();
      // The shape of TransactionsRepository.applyTransitions' compare-and-set.
      const res = await client.query(
        `UPDATE ${name} t SET "status" = u."next", "updated_at" = now(), "event_sequence" = t."event_sequence" + 1,
           "tx_hash" = COALESCE(u."txHash", t."tx_hash"),
           "completed_at" = CASE WHEN u."terminal" THEN now() ELSE t."completed_at" END
         FROM jsonb_to_recordset($1::jsonb) AS u("id" uuid, "expected" text, "next" text, "txHash" text,
           "terminal" boolean)
         WHERE t."id" = u."id" AND t."status" = u."expected"
         RETURNING t."id"`,
        [JSON.stringify(moves)],
      );
      moveMs += performance.now() - t0;
      moveWal += Number(
        (await client.query('SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), $1) AS d', [l0])).rows[0].d,
      );
      moved += res.rowCount;
    }
  }
  const [{ heap }] = (await client.query(`SELECT pg_relation_size($1) AS heap`, [name])).rows;
  await client.end();
  // A backend's table counts reach pg_stat_user_tables when it exits.
  const reader = new Client({ connectionString: url });
  await reader.connect();
  let stats;
  for (let i = 0; i < 50; i++) {
    [stats] = (
      await reader.query(
        `SELECT n_tup_upd::int AS upd, n_tup_hot_upd::int AS hot FROM pg_stat_user_tables WHERE relname = $1`,
        [name],
      )
    ).rows;
    if (stats && stats.upd >= moved) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  await reader.query(`DROP TABLE ${name}`);
  await reader.end();
  return {
    usPerRow: (1000 * moveMs) / moved,
    walPerRow: moveWal / moved,
    hotShare: stats.hot / Math.max(1, stats.upd),
    heapMb: Number(heap) / 2 ** 20,
    moved,
  };
}

const env = await custodyDatabase();
try {
  const results = { before: [], after: [] };
  for (let i = 0; i < runs; i++) {
    for (const variant of i % 2 ? ['after', 'before'] : ['before', 'after']) {
      const r = await run(env.env.DATABASE_URL, variant);
      results[variant].push(r);
      progress(
        `run ${i + 1}/${runs} ${variant.padEnd(6)}: ${r.moved.toLocaleString('en')} moves, ${r.usPerRow.toFixed(1)} µs and ${r.walPerRow.toFixed(0)} WAL bytes per moved row, ${(100 * r.hotShare).toFixed(0)} % HOT, heap ${r.heapMb.toFixed(1)} MB`,
      );
    }
  }
  const rows = [
    ['µs per moved row', 'usPerRow', 1],
    ['WAL bytes per moved row', 'walPerRow', 0],
    ['HOT share of moves', 'hotShare', 2],
    ['heap MB at the end', 'heapMb', 1],
  ];
  console.log(`\n${rounds} rounds of ${batch} transfers, 4 moves each; medians of ${runs} runs (min–max)\n`);
  console.log('| measure | before (baseline) | after | after ÷ before |');
  console.log('|---|---|---|---|');
  for (const [label, key, digits] of rows) {
    const b = results.before.map((r) => r[key]);
    const a = results.after.map((r) => r[key]);
    console.log(
      `| ${label} | ${spread(b, digits)} | ${spread(a, digits)} | ${median(b) ? (median(a) / median(b)).toFixed(2) : '–'} |`,
    );
  }
} finally {
  await env.teardown();
}
