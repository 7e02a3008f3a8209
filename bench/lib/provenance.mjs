// What a run was measured on, so that someone else can tell whether their figures are comparable: the code
// (commit, and whether the tree had changes), the machine, and the versions and durability settings of the
// Postgres and Redis the benches ran against. Printed under the table's header and kept in latest.json.
import { execFileSync } from 'node:child_process';
import { cpus, freemem, release, totalmem } from 'node:os';
import { requireFrom, root } from './proc.mjs';

const ADMIN_URL = process.env.TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

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
    const { rows } = await client.query('SELECT name, setting, unit FROM pg_settings WHERE name = ANY($1)', [
      PG_SETTINGS,
    ]);
    const settings = Object.fromEntries(
      PG_SETTINGS.map((name) => {
        const row = rows.find((r) => r.name === name);
        return [name, row ? `${row.setting}${row.unit && row.unit !== '8kB' ? row.unit : ''}` : null];
      }),
    );
    // shared_buffers is counted in 8 kB pages.
    const sb = rows.find((r) => r.name === 'shared_buffers');
    if (sb?.unit === '8kB') settings.shared_buffers = `${(Number(sb.setting) * 8) / 1024}MB`;
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
