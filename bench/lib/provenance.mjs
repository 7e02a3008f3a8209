// What a run was measured on, so that someone else can tell whether their figures are comparable: the code
// (commit, and whether the tree had changes), the machine, and the versions and durability settings of the
// Postgres and Redis the benches ran against. Printed under the table's header and kept in latest.json.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { cpus, freemem, release, totalmem } from 'node:os';
import { ADMIN_URL, REDIS_URL, requireFrom, root } from './proc.mjs';

/**
 * A digest of the bench scripts of the checkout at `dir` as they are on disk (bench/, results left out),
 * uncommitted changes included: two checkouts whose digests agree measure with the same code.
 */
export function benchFingerprint(dir) {
  const bench = join(dir, 'bench');
  const hash = createHash('sha256');
  const files = readdirSync(bench, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => relative(bench, join(entry.parentPath ?? entry.path, entry.name)))
    .filter((file) => file.split(/[\\/]/)[0] !== 'results')
    .sort();
  for (const file of files)
    hash
      .update(`${file}\0`)
      .update(readFileSync(join(bench, file)))
      .update('\0');
  return hash.digest('hex');
}

/** The Postgres settings that move write figures: durability and memory. */
export const PG_SETTINGS = [
  'synchronous_commit',
  'fsync',
  'wal_sync_method',
  'full_page_writes',
  'shared_buffers',
  'max_connections',
];

const git = (...args) => {
  try {
    return execFileSync('git', args, {
      cwd: root,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim();
  } catch {
    return null;
  }
};

async function postgres() {
  const { Client } = requireFrom('apps/verification-api')('pg');
  const client = new Client({ connectionString: ADMIN_URL, application_name: 'bench-provenance' });
  try {
    await client.connect();
    const version = (await client.query('SHOW server_version')).rows[0].server_version;
    // current_setting() answers in the units a person reads (128MB, not 16384 pages of 8 kB).
    const { rows } = await client.query(
      'SELECT name, current_setting(name) AS value FROM unnest($1::text[]) AS name',
      [PG_SETTINGS],
    );
    const settings = Object.fromEntries(rows.map((r) => [r.name, r.value]));
    return { version, settings };
  } catch (err) {
    return { error: err.message };
  } finally {
    await client.end().catch(() => undefined);
  }
}

async function redis() {
  const Redis = requireFrom('libs/platform')('ioredis');
  const client = new Redis(REDIS_URL, {
    lazyConnect: true,
    maxRetriesPerRequest: 1,
    enableOfflineQueue: false,
  });
  try {
    await client.connect();
    const info = await client.info('server');
    return { version: /redis_version:(\S+)/.exec(info)?.[1] ?? null };
  } catch (err) {
    return { error: err.message };
  } finally {
    client.disconnect();
  }
}

/** Everything a reader needs to compare a run with theirs. */
export async function provenance() {
  const status = git('status', '--porcelain');
  const [pg, rd] = await Promise.all([postgres(), redis()]);
  return {
    commit: git('rev-parse', '--short=12', 'HEAD'),
    dirty: status === null ? null : status.length > 0,
    cpus: cpus().length,
    model: cpus()[0]?.model ?? null,
    memoryGb: Math.round(totalmem() / 2 ** 30),
    freeMemoryGb: Math.round(freemem() / 2 ** 30),
    kernel: release(),
    node: process.version,
    postgres: pg,
    redis: rd,
  };
}

/** One line for the table's header. */
export function provenanceLine(p) {
  const pg = p.postgres.error
    ? `Postgres unreadable (${p.postgres.error})`
    : `Postgres ${p.postgres.version} (${Object.entries(p.postgres.settings)
        .map(([k, v]) => `${k}=${v}`)
        .join(', ')})`;
  const rd = p.redis.error ? `Redis unreadable (${p.redis.error})` : `Redis ${p.redis.version}`;
  const code = p.commit ? `commit ${p.commit}${p.dirty ? ' with uncommitted changes' : ''}` : 'no git commit';
  return `${code}; ${p.cpus} × ${p.model}, ${p.memoryGb} GiB; Linux ${p.kernel}; Node ${p.node}; ${pg}; ${rd}`;
}
