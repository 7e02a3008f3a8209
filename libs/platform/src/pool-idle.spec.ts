import { Pool } from 'pg';
import { DataSource } from 'typeorm';
import { serviceDataSourceOptions } from './database';

/**
 * A service's pooled connections stay open while idle (decision 0416): pg-pool's default closes each after
 * 10 s idle, and a burst's connections then close together, each a backend exit in Postgres.
 */
const POSTGRES_URL = process.env.TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const BURST = 4;

/** Runs BURST queries at once (so the pool opens BURST connections) and answers their backends' pids. */
async function burst(query: (sql: string) => Promise<{ pid: number }[]>): Promise<Set<number>> {
  const rows = await Promise.all(
    Array.from({ length: BURST }, () => query('SELECT pg_backend_pid() AS pid, pg_sleep(0.05)')),
  );
  return new Set(rows.map((r) => r[0]!.pid));
}

describe('service connection pools', () => {
  it('keep their connections open past pg-pool’s 10 s idle timeout, where its default closes them', async () => {
    const service = new DataSource(
      serviceDataSourceOptions({
        url: POSTGRES_URL,
        schema: 'pool_idle_test',
        entities: [],
        migrations: [],
        poolSize: BURST,
      }),
    );
    await service.initialize();
    // The control: a pool with pg-pool's defaults.
    const plain = new Pool({ connectionString: POSTGRES_URL, max: BURST });
    try {
      const servicePids = await burst((sql) => service.query(sql));
      const plainPids = await burst(async (sql) => (await plain.query<{ pid: number }>(sql)).rows);
      expect(servicePids.size).toBe(BURST);
      expect(plainPids.size).toBe(BURST);
      await new Promise((resolve) => setTimeout(resolve, 11_000));
      const alive = async (pids: Set<number>) =>
        (
          await service.query('SELECT count(*)::int AS n FROM pg_stat_activity WHERE pid = ANY($1::int[])', [
            [...pids],
          ])
        )[0].n;
      expect(await alive(servicePids)).toBe(BURST);
      expect(await alive(plainPids)).toBe(0);
      // The same backends answer the next burst: nothing was reconnected.
      expect(await burst((sql) => service.query(sql))).toEqual(servicePids);
    } finally {
      await plain.end();
      await service.destroy();
    }
  }, 30_000);
});
