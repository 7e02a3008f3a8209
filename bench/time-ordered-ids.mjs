// Outbox inserts with time-ordered event ids (decision 0432: `uuidv7()`), against the random ids they had
// before (`gen_random_uuid()`), the baseline, as the table grows. For each size, two copies of custody.outbox
// (its columns and indexes) are filled with that many rows in one fresh database, one with random ids and one
// with ids ordered by the rows' times; then, from a checkpoint on, `--rounds` statements of `--batch` new events
// each go into each copy, one committed statement at a time, as a group-commit batch writes them. The variants
// alternate, `--runs` times. Printed: µs and WAL bytes per inserted row, and the size of the primary key.
//
//   pnpm build && node bench/time-ordered-ids.mjs [--sizes 100000,2000000] [--rounds 300] [--batch 100] [--runs 3]
import { custodyDatabase, custodyRequire, integerOptions, median, spread } from './lib/one-off.mjs';
import { progress } from './lib/report.mjs';

const { sizes, rounds, batch, runs } = integerOptions(
  'time-ordered-ids.mjs',
  { sizes: '100000,2000000', rounds: 300, batch: 100, runs: 3 },
  ['sizes'],
);
const { Client } = custodyRequire('pg');

/** How each variant makes the id of a row inserted now. */
const ID = { random: 'gen_random_uuid()', ordered: 'custody.uuidv7()' };

const EVENT = `'tenant-1', 'transaction.status_changed', 'transaction', gen_random_uuid()::text,
  '{"transactionId": "5f0c6a8e-7d7e-4f53-9f5e-2a4d3b1c9e10", "status": "Broadcasting", "amount": "0.01"}'`;

/** The table with `n` preloaded rows, its ids made the variant's way. */
async function prepare(client, variant, n) {
  const name = `outbox_${variant}`;
  await client.query(`DROP TABLE IF EXISTS ${name}`);
  await client.query(`CREATE TABLE ${name} (LIKE custody.outbox INCLUDING ALL)`);
  await client.query(
    `INSERT INTO ${name} (id, tenant_id, event_type, entity_type, entity_id, data, occurred_at, created_at, sequence)
     SELECT (${variant === 'ordered' ? orderedPreload(n) : 'gen_random_uuid()'})::uuid, ${EVENT}, now(),
       now() - interval '7 days' + i * (interval '7 days' / ${n}), 1
     FROM generate_series(1, ${n}) AS i`,
  );
  await client.query(`VACUUM ANALYZE ${name}`);
  return name;
}

/** Row i's id in the ordered copy: uuidv7()'s random part, with row i's time in its first 48 bits. */
function orderedPreload(n) {
  const ms = `((extract(epoch FROM now() - interval '7 days') * 1000)::bigint + i::bigint * 604800000 / ${n})`;
  const hex = `lpad(to_hex(${ms}), 12, '0')`;
  return `(substr(${hex}, 1, 8) || '-' || substr(${hex}, 9, 4) || substr(custody.uuidv7()::text, 14))`;
}

/** One variant's run on its preloaded copy: µs and WAL bytes per inserted row from a checkpoint on. */
async function run(client, name, variant) {
  await client.query('CHECKPOINT');
  const l0 = (await client.query('SELECT pg_current_wal_lsn() AS l')).rows[0].l;
  let ms = 0;
  for (let r = 0; r < rounds; r++) {
    const t0 = performance.now();
    await client.query(
      `INSERT INTO ${name} (id, tenant_id, event_type, entity_type, entity_id, data, occurred_at, sequence)
       SELECT ${ID[variant]}, ${EVENT}, now(), 1 FROM generate_series(1, ${batch})`,
    );
    ms += performance.now() - t0;
  }
  const [{ wal, pk }] = (
    await client.query(
      `SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), $1) AS wal,
         (SELECT pg_relation_size(indexrelid) FROM pg_index WHERE indrelid = $2::regclass AND indisprimary) AS pk`,
      [l0, name],
    )
  ).rows;
  const rows = rounds * batch;
  return { usPerRow: (1000 * ms) / rows, walPerRow: Number(wal) / rows, pkMb: Number(pk) / 2 ** 20 };
}

const env = await custodyDatabase();
const client = new Client({ connectionString: env.env.DATABASE_URL });
await client.connect();
try {
  const table = [];
  for (const size of sizes) {
    const names = {};
    for (const variant of ['random', 'ordered']) {
      const t0 = performance.now();
      names[variant] = await prepare(client, variant, size);
      progress(
        `${size.toLocaleString('en')} rows preloaded, ${variant} ids, in ${((performance.now() - t0) / 1000).toFixed(1)} s`,
      );
    }
    const results = { random: [], ordered: [] };
    for (let i = 0; i < runs; i++) {
      for (const variant of i % 2 ? ['ordered', 'random'] : ['random', 'ordered']) {
        const r = await run(client, names[variant], variant);
        results[variant].push(r);
        progress(
          `${size.toLocaleString('en')} rows, run ${i + 1}/${runs} ${variant.padEnd(7)}: ${r.usPerRow.toFixed(1)} µs and ${r.walPerRow.toFixed(0)} WAL bytes per inserted row, primary key ${r.pkMb.toFixed(1)} MB`,
        );
      }
    }
    for (const [label, key, digits] of [
      ['µs per inserted row', 'usPerRow', 1],
      ['WAL bytes per inserted row', 'walPerRow', 0],
      ['primary key MB after the run', 'pkMb', 1],
    ]) {
      const b = results.random.map((r) => r[key]);
      const a = results.ordered.map((r) => r[key]);
      table.push(
        `| ${size.toLocaleString('en')} | ${label} | ${spread(b, digits)} | ${spread(a, digits)} | ${(median(a) / median(b)).toFixed(2)} |`,
      );
    }
    for (const name of Object.values(names)) await client.query(`DROP TABLE ${name}`);
  }
  console.log(
    `\n${runs} alternating runs of ${rounds} statements × ${batch} events from a checkpoint on; medians (min–max)\n`,
  );
  console.log('| rows before | measure | random ids (baseline) | time-ordered ids | ordered ÷ random |');
  console.log('|---|---|---|---|---|');
  for (const line of table) console.log(line);
} finally {
  await client.end();
  await env.teardown();
}
