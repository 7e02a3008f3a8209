// The webhook dispatcher's attempt batch as a prepared statement on a table that grows after the plan was made
// (decision 0413): Postgres plans a named statement generically at its sixth run and keeps that plan until the
// next ANALYZE. Each size runs twice in the same process on a fresh table: once with the dispatcher's session
// settings (sequential scans off), once with Postgres' default (on), the baseline.
//
//   node bench/attempt-batch-plan.mjs [--sizes 5000,20000,100000] [--batches 1000]
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { requireFrom, root } from './lib/proc.mjs';
import { progress } from './lib/report.mjs';

const require = requireFrom('apps/webhook-dispatcher');
const { values } = parseArgs({
  options: {
    sizes: { type: 'string', default: '5000,20000,100000' },
    batches: { type: 'string', default: '1000' },
  },
});
const sizes = values.sizes.split(',').map(Number);
const batches = Number(values.batches);
if (sizes.some((n) => !Number.isInteger(n) || n < 1) || !Number.isInteger(batches) || batches < 1) {
  console.error('usage: node bench/attempt-batch-plan.mjs [--sizes N,N,...] [--batches N]');
  process.exit(2);
}

const BATCH = 8;
const testing = require('@tessera/testing');
const { Client } = require('pg');
const { sessionOptions } = require('@tessera/platform');
const { RECORD_BATCH } = require(
  join(root, 'apps/webhook-dispatcher/dist/modules/deliveries/deliveries.repository.js'),
);
const { databaseOptions, SCHEMA, SESSION_SETTINGS } = require(
  join(root, 'apps/webhook-dispatcher/dist/database/database.js'),
);

/** ms per batch of BATCH attempts on a table of `size` deliveries, the plan made while it held 50. */
async function measure(url, size, settings) {
  const client = new Client({ connectionString: url, options: sessionOptions(SCHEMA, settings) });
  await client.connect();
  try {
    await client.query('TRUNCATE webhook_deliveries, webhook_attempts');
    const insert = (n) =>
      client.query(
        `INSERT INTO webhook_deliveries (event_id, endpoint_id, tenant_id, source, event_type, entity_type, entity_id,
           payload, occurred_at, next_attempt_at)
         SELECT gen_random_uuid(), gen_random_uuid(), 't', 'custody', 'wallet.created', 'wallet', 'w', repeat('p', 300),
           now(), now() FROM generate_series(1, $1)`,
        [n],
      );
    const counts = new Map();
    const load = async () => {
      for (const r of (await client.query('SELECT id, attempt_count FROM webhook_deliveries')).rows)
        counts.set(r.id, r.attempt_count);
      return [...counts.keys()];
    };
    const run = async (ids) => {
      const now = new Date().toISOString();
      const input = ids.map((id, i) => ({
        i,
        id,
        attempt_count: counts.get(id),
        status: 'failed',
        next_attempt_at: now,
        attempted_at: now,
        request_url: 'https://receiver.example/hook',
        http_status_code: 500,
        response_body: 'no',
        duration_ms: 1,
        success: false,
      }));
      const r = await client.query({ name: 'record', text: RECORD_BATCH, values: [JSON.stringify(input)] });
      if (r.rowCount !== ids.length) throw new Error(`wrote ${r.rowCount} of ${ids.length} attempts`);
      for (const id of ids) counts.set(id, counts.get(id) + 1);
    };
    await insert(50);
    const young = await load();
    for (let k = 0; k < 10; k++) await run(young.slice(0, BATCH)); // the plan is made now, on 50 rows
    await insert(size - 50);
    const ids = await load();
    const started = process.hrtime.bigint();
    for (let k = 0; k < batches; k++)
      await run(Array.from({ length: BATCH }, (_, j) => ids[(k * BATCH + j) % ids.length]));
    return Number(process.hrtime.bigint() - started) / 1e6 / batches;
  } finally {
    await client.end();
  }
}

const env = await testing.createTestEnvironment([
  testing.migratorFor(databaseOptions, join(root, 'apps/webhook-dispatcher/src/database/migrations')),
]);
try {
  const url = env.env.DATABASE_URL;
  console.log(
    `| deliveries | ${BATCH} attempts, dispatcher sessions | baseline: sequential scans on | speed, product ÷ baseline |`,
  );
  console.log('|---|---|---|---|');
  for (const size of sizes) {
    progress(`attempt batch on ${size} deliveries: ${batches} batches each way`);
    const product = await measure(url, size, SESSION_SETTINGS);
    const baseline = await measure(url, size, { enable_seqscan: 'on' });
    console.log(
      `| ${size} | ${product.toFixed(3)} ms | ${baseline.toFixed(3)} ms | ${((100 * baseline) / product).toFixed(0)} % |`,
    );
  }
} finally {
  await env.teardown();
}
