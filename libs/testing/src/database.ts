import { createHash, randomBytes } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from 'pg';

/** One service schema to migrate into the template: its migrations folder (for the fingerprint) and a runner. */
export interface SchemaMigrator {
  schema: string;
  migrationsDir: string;
  /** Files outside migrationsDir whose migrations the runner applies too (the platform's outbox migrations). */
  sources?: readonly string[];
  migrate: (databaseUrl: string) => Promise<unknown>;
}

export const TEST_POSTGRES_URL =
  process.env.TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

export function databaseUrl(name: string, base = TEST_POSTGRES_URL): string {
  const url = new URL(base);
  url.pathname = `/${name}`;
  return url.toString();
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir)
    .sort()
    .flatMap((name) => {
      const path = join(dir, name);
      return statSync(path).isDirectory() ? filesUnder(path) : [path];
    });
}

/** Changes whenever a migration file changes, so a stale template is never reused. */
function fingerprint(migrators: SchemaMigrator[]): string {
  const hash = createHash('sha256');
  for (const m of migrators) {
    hash.update(m.schema);
    for (const file of filesUnder(m.migrationsDir)) hash.update(file).update(readFileSync(file));
    for (const file of m.sources ?? []) hash.update(file).update(readFileSync(file));
  }
  return hash.digest('hex').slice(0, 16);
}

async function withAdmin<T>(run: (client: Client) => Promise<T>): Promise<T> {
  const client = new Client({
    connectionString: TEST_POSTGRES_URL,
    application_name: 'tessera-test-harness',
  });
  await client.connect();
  try {
    return await run(client);
  } finally {
    await client.end();
  }
}

async function databaseExists(client: Client, name: string): Promise<boolean> {
  const { rowCount } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
  return (rowCount ?? 0) > 0;
}

/**
 * Builds (once per set of migrations) a template database with every given schema migrated.
 * Concurrent test files wait on an advisory lock instead of building it twice.
 */
export async function ensureTemplate(migrators: SchemaMigrator[]): Promise<string> {
  const name = `tessera_tpl_${fingerprint(migrators)}`;
  return withAdmin(async (admin) => {
    await admin.query('SELECT pg_advisory_lock(hashtext($1))', [name]);
    try {
      if (await databaseExists(admin, name)) return name;
      const building = `${name}_build_${randomBytes(3).toString('hex')}`;
      await admin.query(`CREATE DATABASE "${building}"`);
      try {
        for (const m of migrators) await m.migrate(databaseUrl(building));
      } catch (err) {
        await admin.query(`DROP DATABASE IF EXISTS "${building}" WITH (FORCE)`);
        throw err;
      }
      await admin.query(`ALTER DATABASE "${building}" RENAME TO "${name}"`);
      await admin.query(`ALTER DATABASE "${name}" WITH IS_TEMPLATE true`);
      return name;
    } finally {
      await admin.query('SELECT pg_advisory_unlock(hashtext($1))', [name]);
    }
  });
}

export interface TestDatabase {
  name: string;
  url: string;
  drop: () => Promise<void>;
}

/** A fresh database for one test file, cloned from the migrated template: fast and parallel-safe. */
export async function createTestDatabase(migrators: SchemaMigrator[]): Promise<TestDatabase> {
  const template = await ensureTemplate(migrators);
  const name = `tessera_test_${process.pid}_${randomBytes(4).toString('hex')}`;
  await withAdmin(async (admin) => {
    for (let attempt = 0; ; attempt++) {
      try {
        await admin.query(`CREATE DATABASE "${name}" TEMPLATE "${template}"`);
        return;
      } catch (err) {
        // Another session briefly holding the template: wait and clone again.
        if (attempt >= 20 || !/being accessed by other users/.test((err as Error).message)) throw err;
        await new Promise((r) => setTimeout(r, 100 + attempt * 50));
      }
    }
  });
  return {
    name,
    url: databaseUrl(name),
    drop: () =>
      withAdmin((admin) => admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`)).then(
        () => undefined,
      ),
  };
}
