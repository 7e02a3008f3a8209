#!/usr/bin/env node
// Preloads a bench database with N copies of real rows, by COPY FROM STDIN (pg-copy-streams), so the scale
// benches measure the hot paths with 1 million applicants or 1 million transactions already in the tables.
//
//   node bench/seed-scale.mjs --database postgres://…/db --what applicants   [--count 1000000]
//   node bench/seed-scale.mjs --database postgres://…/db --what transactions [--count 1000000]
//
// The rows are copies of templates the product itself wrote through its API (the bench makes them first):
//   applicants:   the applicant with external id `seed-template` of verification schema, with its rows in
//                 applicant_steps, review_events and field_claims;
//   transactions: the two completed custody transfers tagged by idempotency keys `seed-template-0` (wallet A
//                 to B) and `seed-template-1` (B back to A), with their ledger entries and idempotency keys.
// Copy i takes template i % templates, so transfers come in opposite pairs: every wallet's ledger still sums to
// its balance (the bench checks), and the balances stay as funded. Each copied row gets new ids (uuid i of
// every uuid the template owns) and new unique text (`seed-template` → `seed-<i>`); references to anything
// else (product, level, tenant, wallets, assets) are kept. Then VACUUM ANALYZE, as autovacuum would, and a
// CHECKPOINT, so the copy's WAL is not flushed during the measured run.
// Progress lines every 100,000 rows; prints the seeding time.
import { randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { progress } from './lib/report.mjs';
import { requireFrom } from './lib/proc.mjs';

const { from: copyFrom, to: copyTo } = createRequire(import.meta.url)('pg-copy-streams');
const { Client } = requireFrom('apps/verification-api')('pg');

/** What each kind copies: the templates (the owned uuids are found from these rows) and the tables. */
const KINDS = {
  applicants: {
    schema: 'verification',
    templates: async (client) =>
      (
        await client.query(
          `SELECT id::text FROM verification.applicants WHERE external_user_id = 'seed-template'`,
        )
      ).rows.map((r) => r.id),
    tables: [
      { table: 'applicants', where: 'id = $1', ownsId: true },
      { table: 'applicant_steps', where: 'applicant_id = $1', ownsId: true },
      { table: 'review_events', where: 'applicant_id = $1', ownsId: true },
      { table: 'field_claims', where: 'applicant_id = $1' },
    ],
  },
  transactions: {
    schema: 'custody',
    templates: async (client) =>
      (
        await client.query(
          `SELECT i.response->>'transactionId' AS id FROM custody.idempotency_keys i
            WHERE i.key LIKE 'seed-template-%' ORDER BY i.key`,
        )
      ).rows.map((r) => r.id),
    tables: [
      { table: 'transactions', where: 'id = $1', ownsId: true },
      { table: 'ledger_entries', where: 'transaction_id = $1', ownsId: true },
      { table: 'idempotency_keys', where: `response->>'transactionId' = $1::text` },
    ],
  },
};

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;
/** Copy i's k-th new uuid: deterministic, unique per (k, i), never a template's. */
const seedUuid = (run, k, i) =>
  `5eed${run}-${k.toString(16).padStart(4, '0')}-4000-8000-${i.toString(16).padStart(12, '0')}`;

async function copyOut(client, sql) {
  const chunks = [];
  for await (const c of client.query(copyTo(sql))) chunks.push(c);
  return Buffer.concat(chunks).toString('utf8').split('\n').filter(Boolean);
}

/** Copies the templates `count` times; returns { rows, seconds }. */
export async function seed(databaseUrl, what, count = 1_000_000) {
  const kind = KINDS[what];
  if (!kind) throw new Error(`--what must be one of ${Object.keys(KINDS).join(', ')}`);
  const client = new Client({ connectionString: databaseUrl, application_name: 'bench-seed-scale' });
  await client.connect();
  const started = Date.now();
  let rows = 0;
  try {
    const templateIds = await kind.templates(client);
    if (templateIds.length === 0)
      throw new Error(`no ${what} template rows (see the header of seed-scale.mjs)`);
    // Template lines per table, and the uuids the templates own (the `id`, first column, of tables marked ownsId).
    const perTable = [];
    const owned = new Map();
    for (const t of kind.tables) {
      const lines = [];
      for (const [ti, id] of templateIds.entries()) {
        const literal = `'${id}'`;
        const select = `SELECT * FROM ${kind.schema}.${t.table} WHERE ${t.where.replace('$1', literal)}`;
        for (const line of await copyOut(client, `COPY (${select}) TO STDOUT`)) {
          lines.push({ ti, line });
          const rowId = line.split('\t')[0];
          if (t.ownsId && !owned.has(rowId)) owned.set(rowId, owned.size);
        }
      }
      perTable.push({ ...t, lines });
    }
    for (const id of templateIds) if (!owned.has(id)) owned.set(id, owned.size);
    const run = randomBytes(2).toString('hex');
    for (const t of perTable) {
      const byTemplate = templateIds.map((_, ti) => t.lines.filter((l) => l.ti === ti).map((l) => l.line));
      const total = count * (t.lines.length / templateIds.length);
      progress(`seed ${what}: ${kind.schema}.${t.table}, ${Math.round(total).toLocaleString('en')} rows`);
      let done = 0;
      let next = 100_000;
      const source = Readable.from(
        (function* () {
          const batch = [];
          for (let i = 0; i < count; i++) {
            for (const line of byTemplate[i % templateIds.length]) {
              batch.push(
                line
                  .replace(UUID, (u) => (owned.has(u) ? seedUuid(run, owned.get(u), i) : u))
                  .replaceAll('seed-template', `seed-${run}-${i}`),
              );
              done++;
            }
            if (batch.length >= 2000) {
              yield `${batch.join('\n')}\n`;
              batch.length = 0;
            }
            if (done >= next) {
              progress(`seed ${what}: ${t.table} ${done.toLocaleString('en')} rows`);
              next += 100_000;
            }
          }
          if (batch.length) yield `${batch.join('\n')}\n`;
        })(),
      );
      await pipeline(source, client.query(copyFrom(`COPY ${kind.schema}.${t.table} FROM STDIN`)));
      rows += done;
    }
    progress(`seed ${what}: VACUUM ANALYZE`);
    for (const t of kind.tables) await client.query(`VACUUM ANALYZE ${kind.schema}.${t.table}`);
    // The copy wrote some GB of WAL: without a checkpoint now, one starts during the measured run and its
    // writes and fsyncs land on the bench's commits (custody p99 at 50 connections: 319 ms, against 53 ms
    // on the empty tables). A system that has been running holds its rows already checkpointed.
    progress(`seed ${what}: CHECKPOINT`);
    await client.query('CHECKPOINT');
  } finally {
    await client.end();
  }
  const seconds = (Date.now() - started) / 1000;
  progress(`seed ${what}: ${rows.toLocaleString('en')} rows in ${seconds.toFixed(1)} s`);
  return { rows, seconds };
}

/**
 * EXPLAIN (ANALYZE, BUFFERS) of the lookups the hot paths make, on the seeded tables (a copy's keys, so the
 * row is found among the million): the plan's node types and the execution time, for latest.json and the docs.
 */
const HOT_LOOKUPS = {
  applicants: {
    // One seeded applicant's keys (found first, so the plans below are of the lookups alone).
    keys: `SELECT id, external_user_id, product_id FROM verification.applicants
            WHERE external_user_id LIKE 'seed-%' ORDER BY external_user_id DESC LIMIT 1`,
    lookups: [
      [
        'applicant by (external_user_id, product_id): status, create conflict',
        `SELECT a.id, a.status FROM verification.applicants a WHERE a.external_user_id = $1 AND a.product_id = $2`,
        (k) => [k.external_user_id, k.product_id],
      ],
      [
        'steps of an applicant',
        `SELECT kind, review_status FROM verification.applicant_steps WHERE applicant_id = $1`,
        (k) => [k.id],
      ],
    ],
  },
  transactions: {
    keys: `SELECT tenant_id, environment, endpoint, key FROM custody.idempotency_keys
            WHERE key LIKE 'seed-%' ORDER BY key DESC LIMIT 1`,
    lookups: [
      [
        'idempotency key (tenant, environment, endpoint, key)',
        `SELECT status_code FROM custody.idempotency_keys
          WHERE tenant_id = $1 AND environment = $2 AND endpoint = $3 AND key = $4`,
        (k) => [k.tenant_id, k.environment, k.endpoint, k.key],
      ],
      [
        'transactions page (tenant, environment, newest first)',
        `SELECT id FROM custody.transactions WHERE tenant_id = $1 AND environment = $2
          ORDER BY created_at DESC, id DESC LIMIT 50`,
        (k) => [k.tenant_id, k.environment],
      ],
    ],
  },
};

export async function explainHotPaths(databaseUrl, what) {
  const hot = HOT_LOOKUPS[what];
  if (!hot) return [];
  const client = new Client({ connectionString: databaseUrl, application_name: 'bench-explain' });
  await client.connect();
  try {
    const [key] = (await client.query(hot.keys)).rows;
    if (!key) return [];
    const out = [];
    for (const [label, sql, params] of hot.lookups) {
      const { rows } = await client.query(`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${sql}`, params(key));
      const plan = rows[0]['QUERY PLAN'][0];
      const nodes = [];
      const walk = (n) => {
        nodes.push(
          `${n['Node Type']}${n['Index Name'] ? ` using ${n['Index Name']}` : ''}${n['Relation Name'] ? ` on ${n['Relation Name']}` : ''}`,
        );
        for (const c of n.Plans ?? []) walk(c);
      };
      walk(plan.Plan);
      out.push({
        label,
        executionMs: plan['Execution Time'],
        sharedHitBlocks: plan.Plan['Shared Hit Blocks'],
        sharedReadBlocks: plan.Plan['Shared Read Blocks'],
        nodes,
      });
    }
    return out;
  } finally {
    await client.end();
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({
    options: {
      database: { type: 'string' },
      what: { type: 'string' },
      count: { type: 'string', default: '1000000' },
    },
  });
  if (!values.database || !values.what) {
    console.error(
      'usage: node bench/seed-scale.mjs --database URL --what applicants|transactions [--count N]',
    );
    process.exit(2);
  }
  const result = await seed(values.database, values.what, Number(values.count));
  console.log(
    JSON.stringify({ ...result, explain: await explainHotPaths(values.database, values.what) }, null, 2),
  );
}
