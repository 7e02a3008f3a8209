// The bench's view of pg_stat_statements: which statements the product spent Postgres time on during each
// bench, printed beside the table and kept in bench/results/latest.json. Only when the extension is loaded
// (shared_preload_libraries; docs/performance.md, "Profiling"); otherwise one line says how to enable it.
import { ADMIN_URL, requireFrom } from './proc.mjs';
import { progress } from './report.mjs';

const { Client } = requireFrom('apps/verification-api')('pg');

export async function statementsProbe() {
  const client = new Client({ connectionString: ADMIN_URL, application_name: 'bench-pg-statements' });
  await client.connect();
  const [{ preload }] = (await client.query(`SELECT current_setting('shared_preload_libraries') AS preload`))
    .rows;
  if (!/\bpg_stat_statements\b/.test(preload)) {
    await client.end();
    progress(
      "pg_stat_statements is not loaded: statement profiles are skipped (ALTER SYSTEM SET shared_preload_libraries = 'pg_stat_statements', then restart Postgres)",
    );
    return null;
  }
  await client.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
  return {
    reset: () => client.query('SELECT pg_stat_statements_reset()'),
    /** The statements of the bench's scratch databases with the most execution time since the reset. */
    async top(limit = 8) {
      const { rows } = await client.query(
        `SELECT s.calls::int, round(s.total_exec_time::numeric, 1)::float8 AS "totalMs",
                round(s.mean_exec_time::numeric, 3)::float8 AS "meanMs", s.rows::int,
                s.shared_blks_hit::int AS "blocksHit", s.shared_blks_read::int AS "blocksRead",
                s.wal_bytes::float8 AS "walBytes", left(regexp_replace(s.query, '\\s+', ' ', 'g'), 160) AS query
           FROM pg_stat_statements s LEFT JOIN pg_database d ON d.oid = s.dbid
          -- The bench's scratch databases are usually dropped by now: no pg_database row is theirs too.
          WHERE (d.datname IS NULL OR d.datname LIKE 'tessera_test_%') AND s.query NOT ILIKE '%pg_stat_statements%'
          ORDER BY s.total_exec_time DESC LIMIT $1`,
        [limit],
      );
      return rows;
    },
    close: () => client.end(),
  };
}

/** Progress lines for a bench's top statements: calls, total and mean time, rows, the statement's start. */
export function printStatements(name, rows) {
  if (rows.length === 0) return;
  progress(`${name}: Postgres time by statement (pg_stat_statements)`);
  for (const r of rows)
    progress(
      `  ${String(r.totalMs.toFixed(0)).padStart(7)} ms  ${String(r.calls).padStart(7)} calls  ${r.meanMs.toFixed(3)} ms each  ${String(r.rows).padStart(7)} rows  ${r.query}`,
    );
}
