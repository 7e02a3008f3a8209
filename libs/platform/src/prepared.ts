import type { Pool } from 'pg';
import type { DataSource } from 'typeorm';
import type { PostgresDriver } from 'typeorm/driver/postgres/PostgresDriver';

/** The DataSource's own pg pool: same connections, same search_path, for what TypeORM's `query` cannot send. */
export function pgPool(dataSource: DataSource): Pool {
  return (dataSource.driver as PostgresDriver).master as Pool;
}

export type PreparedQuery = <T>(name: string, text: string, values: unknown[]) => Promise<T[]>;

/**
 * Runs a hot-path statement as a named prepared statement on the DataSource's own pg pool, so each pooled
 * connection parses and plans it once instead of on every request (TypeORM's `query` always sends an
 * unnamed statement). Same pool, same search_path, same transaction rules: a single statement autocommits.
 */
export function preparedQuery(dataSource: DataSource): PreparedQuery {
  return async <T>(name: string, text: string, values: unknown[]) => {
    const result = await pgPool(dataSource).query({ name, text, values });
    return result.rows as T[];
  };
}
