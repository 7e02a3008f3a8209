import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client, type ClientBase } from 'pg';
import { baseEnvSchema, loadConfig } from './config';
import { OutboxWakeSubscriber } from './outbox-wake';
import type { ClassRef } from './tokens';
import { DataSource, type DataSourceOptions, type MixedList, type EntitySchema } from 'typeorm';

export interface ServiceDatabaseOptions {
  url: string;
  /** The service's own schema: verification, custody, webhooks or media. */
  schema: string;
  entities: MixedList<ClassRef | string | EntitySchema>;
  migrations: MixedList<ClassRef | string>;
  poolSize?: number;
  applicationName?: string;
  /**
   * Server settings of every pooled session, sent in the startup packet (`-c name=value`): say, a planner
   * setting that keeps the service's prepared statements on their indexes (decision 0413).
   */
  settings?: Readonly<Record<string, string>>;
}

const SCHEMA_NAME = /^[a-z_][a-z0-9_]*$/;
const SETTING = /^[a-z_][a-z0-9_.]*$/;
const SETTING_VALUE = /^[A-Za-z0-9_.,-]+$/;

/** The startup `options` of a session: the schema's search_path, then the service's own settings. */
export function sessionOptions(schema: string, settings: Readonly<Record<string, string>> = {}): string {
  const pairs: [string, string][] = [['search_path', `${schema},public`], ...Object.entries(settings)];
  for (const [name, value] of pairs) {
    if (!SETTING.test(name) || !SETTING_VALUE.test(value))
      throw new Error(`Invalid session setting: ${name}=${value}`);
  }
  return pairs.map(([name, value]) => `-c ${name}=${value}`).join(' ');
}

function assertSchemaName(schema: string): void {
  if (!SCHEMA_NAME.test(schema)) throw new Error(`Invalid schema name: ${schema}`);
}

/**
 * pg-pool takes its idle 'error' listener off a new client when it hands it out, and TypeORM puts its own on
 * a microtask later. A FATAL that arrives in the same socket read as the connection's ReadyForQuery (a
 * pg_terminate_backend, a failover, a restart right after connecting) is emitted in between, with no
 * listener: Node throws it, and the process dies. This listener stays for the client's life so such an error
 * is an ordinary one: the pending query fails (503 to the caller) and the pool drops the client.
 */
export function keepClientErrorsHandled(client: ClientBase): void {
  client.on('error', () => undefined);
}

/** DataSource options for one service schema: its own migrations table, never synchronize. */
export function serviceDataSourceOptions(opts: ServiceDatabaseOptions): DataSourceOptions {
  assertSchemaName(opts.schema);
  return {
    type: 'postgres',
    url: opts.url,
    schema: opts.schema,
    entities: opts.entities,
    migrations: opts.migrations,
    migrationsTableName: 'migrations',
    migrationsTransactionMode: 'each',
    synchronize: false,
    uuidExtension: 'pgcrypto',
    migrationsRun: false,
    logging: false,
    // Wakes the outbox relay after a transaction that appended outbox rows commits (outbox-wake.ts).
    subscribers: [OutboxWakeSubscriber],
    extra: {
      max: opts.poolSize ?? 20,
      application_name: opts.applicationName ?? opts.schema,
      options: sessionOptions(opts.schema, opts.settings),
      // pg-pool calls it on every new connection before handing it out.
      onConnect: keepClientErrorsHandled,
      // Connections stay open once opened (pg-pool would close each after 10 s idle). A burst's connections
      // closing together cost Postgres a backend exit each, 220–310 ms for 20–30 of them on the bench machine,
      // and stalled other sessions' queries meanwhile (decision 0416). `max` bounds what a process keeps.
      idleTimeoutMillis: 0,
    },
  };
}

/**
 * TypeORM creates "<schema>"."migrations" before the first migration runs, so the schema must exist first.
 * An advisory lock serialises concurrent migrators (two replicas booting with MIGRATE_ON_BOOT).
 */
export async function migrateServiceSchema(opts: ServiceDatabaseOptions): Promise<string[]> {
  assertSchemaName(opts.schema);
  const lock = new Client({ connectionString: opts.url, application_name: `${opts.schema}-migrate` });
  await lock.connect();
  try {
    await lock.query('SELECT pg_advisory_lock(hashtext($1))', [`tessera:migrate:${opts.schema}`]);
    await lock.query(`CREATE SCHEMA IF NOT EXISTS "${opts.schema}"`);
    const dataSource = new DataSource(serviceDataSourceOptions({ ...opts, poolSize: 2 }));
    await dataSource.initialize();
    try {
      const ran = await dataSource.runMigrations({ transaction: 'each' });
      return ran.map((m) => m.name);
    } finally {
      await dataSource.destroy();
    }
  } finally {
    await lock
      .query('SELECT pg_advisory_unlock(hashtext($1))', [`tessera:migrate:${opts.schema}`])
      .catch(() => undefined);
    await lock.end();
  }
}

/**
 * Generates the SQL that would bring the migrated schema in line with the entities.
 * An empty list means entities and migrations agree; CI fails otherwise.
 */
export async function pendingSchemaChanges(opts: ServiceDatabaseOptions): Promise<string[]> {
  const dataSource = new DataSource(serviceDataSourceOptions({ ...opts, poolSize: 2 }));
  await dataSource.initialize();
  try {
    const sql = await dataSource.driver.createSchemaBuilder().log();
    return sql.upQueries.map((q) => q.query);
  } finally {
    await dataSource.destroy();
  }
}

function migrationSource(className: string, up: string[], down: string[]): string {
  const lines = (queries: string[]) =>
    queries.map((q) => `    await queryRunner.query(${JSON.stringify(q)});`).join('\n');
  return `import type { MigrationInterface, QueryRunner } from 'typeorm';

export class ${className} implements MigrationInterface {
  name = '${className}';

  async up(queryRunner: QueryRunner): Promise<void> {
${lines(up)}
  }

  async down(queryRunner: QueryRunner): Promise<void> {
${lines(down)}
  }
}
`;
}

/** Writes a migration with the SQL that brings the migrated schema in line with the entities. */
export async function generateMigration(
  opts: ServiceDatabaseOptions,
  name: string,
  dir: string,
): Promise<string | null> {
  const dataSource = new DataSource(serviceDataSourceOptions({ ...opts, poolSize: 2 }));
  await dataSource.initialize();
  try {
    const sql = await dataSource.driver.createSchemaBuilder().log();
    if (sql.upQueries.length === 0) return null;
    const timestamp = Date.now();
    const className = `${name.replace(/[^A-Za-z0-9]/g, '')}${timestamp}`;
    const file = join(dir, `${timestamp}-${name}.ts`);
    writeFileSync(
      file,
      migrationSource(
        className,
        sql.upQueries.map((q) => q.query),
        sql.downQueries.reverse().map((q) => q.query),
      ),
    );
    return file;
  } finally {
    await dataSource.destroy();
  }
}

/**
 * Entry for each app's `db:migrate` script. Plain: migrate. `--check`: migrate, then fail when the entities
 * would still change the schema (drift). `--generate Name --dir src/database/migrations`: write that change.
 */
export async function runMigrateCli(
  optionsFor: (databaseUrl: string) => ServiceDatabaseOptions,
  argv: string[] = process.argv,
): Promise<void> {
  let opts: ServiceDatabaseOptions;
  try {
    // The migrate command needs only DATABASE_URL, so it is parsed here rather than with the app's full schema.
    // eslint-disable-next-line no-restricted-syntax
    opts = optionsFor(loadConfig(baseEnvSchema.pick({ DATABASE_URL: true }), process.env).DATABASE_URL);
  } catch (err) {
    console.error((err as Error).message);
    process.exitCode = 1;
    return;
  }
  try {
    const generate = argv.indexOf('--generate');
    if (generate >= 0) {
      await migrateServiceSchema(opts);
      const dirIndex = argv.indexOf('--dir');
      const file = await generateMigration(
        opts,
        argv[generate + 1] ?? 'Change',
        dirIndex >= 0 ? argv[dirIndex + 1] : '.',
      );
      console.log(JSON.stringify({ schema: opts.schema, generated: file }));
      return;
    }
    const ran = await migrateServiceSchema(opts);
    const line: Record<string, unknown> = { schema: opts.schema, migrationsRun: ran };
    if (argv.includes('--check')) {
      const drift = await pendingSchemaChanges(opts);
      line.drift = drift;
      if (drift.length > 0) {
        console.error(JSON.stringify(line, null, 2));
        console.error(`Entities and migrations of schema "${opts.schema}" have drifted apart.`);
        process.exitCode = 1;
        return;
      }
    }
    console.log(JSON.stringify(line));
  } catch (err) {
    console.error(`Migrating schema "${opts.schema}" failed: ${(err as Error).message}`);
    process.exitCode = 1;
  }
}

/** The SQLSTATE of a failed query ('' when it is not a database error); TypeORM's wrapper included. */
export function sqlState(error: unknown): string {
  const e = error as { code?: unknown; driverError?: { code?: unknown } } | null;
  return String(e?.driverError?.code ?? e?.code ?? '');
}

/** SQLSTATE class 22 (data exception) or 23 (integrity constraint violation): one row's data is at fault. */
export const isDataError = (error: unknown): boolean => /^2[23]/.test(sqlState(error));
