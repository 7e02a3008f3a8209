import type { ChildProcess } from 'node:child_process';
import { Client } from 'pg';

/**
 * Helpers shared by the chaos suites (`chaos/<name>.chaos-spec.ts` in each package, issue 15): a seeded random stream so a run
 * can be replayed, `kill -9` of a child process, and a plain SQL client on the test database that the
 * suites use both to assert on stored rows and to cut the apps' connections (pg_terminate_backend).
 */

/** A mulberry32 stream of numbers in [0, 1): the same seed gives the same run. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** `count` sorted whole percents in [from, to], drawn from `seed`: the moments a suite kills at. */
export function seededPercents(seed: number, count: number, from = 5, to = 90): number[] {
  const next = seededRandom(seed);
  return Array.from({ length: count }, () => from + Math.floor(next() * (to - from + 1))).sort(
    (a, b) => a - b,
  );
}

/** SIGKILL (no shutdown hook runs) and wait for the exit; a no-op on a process that has already exited. */
export async function kill9(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGKILL');
  await exited;
}

/** Runs `task(i)` for i = 0 … count − 1 with at most `parallel` in flight; the results in order. */
export async function runBounded<T>(
  count: number,
  parallel: number,
  task: (i: number) => Promise<T>,
): Promise<T[]> {
  const results: T[] = new Array(count);
  let next = 0;
  await Promise.all(
    Array.from({ length: parallel }, async () => {
      while (next < count) {
        const i = next++;
        results[i] = await task(i);
      }
    }),
  );
  return results;
}

export interface TerminationLoad {
  probe: SqlProbe;
  database: string;
  /** Cut only this pool's connections (its application_name); all the app's when absent. */
  applicationName?: string;
  /** Seeds the 150-450 ms intervals between cuts. */
  seed: number;
  /** At least this many requests are sent. */
  minimum: number;
  parallel: number;
  /** Sends request `i`; true when a cut failed it (the test's 503). */
  send: (i: number) => Promise<boolean>;
}

/**
 * The load of a pg_terminate_backend suite: `send(0)`, `send(1)`, … with `parallel` in flight while every
 * connection of the app is cut at seeded 150-450 ms intervals. Past `minimum`, the load goes on until a cut
 * has failed a request (at most 10 × `minimum` in all): on a fast machine the minimum can finish within two
 * cuts that only found idle connections, and the suite would then never see the failure it is about.
 * Returns how many requests were sent, connections cut and rounds of cuts.
 */
export async function loadUnderTermination(load: TerminationLoad) {
  const random = seededRandom(load.seed);
  let done = false;
  let terminated = 0;
  let rounds = 0;
  const terminator = (async () => {
    while (!done) {
      terminated += await load.probe.terminateAppBackends(load.database, load.applicationName);
      rounds++;
      await new Promise((r) => setTimeout(r, 150 + Math.floor(random() * 300)));
    }
  })();
  let sent = 0;
  let failed = 0;
  const more = () => sent < load.minimum || (failed === 0 && sent < 10 * load.minimum);
  await Promise.all(
    Array.from({ length: load.parallel }, async () => {
      while (more()) if (await load.send(sent++)) failed++;
    }),
  );
  done = true;
  await terminator;
  return { sent, terminated, rounds };
}

/** The application_name of the chaos suites' own connections: never terminated by terminateAppBackends. */
export const CHAOS_SQL_APPLICATION = 'tessera-chaos-probe';

export interface SqlProbe {
  query: <T = Record<string, unknown>>(text: string, params?: unknown[]) => Promise<T[]>;
  /**
   * pg_terminate_backend on every connection to `database` except the probe's own (and the harness's), or
   * only on those whose application_name is `applicationName` (the app's pool): what an operator, a failover
   * or a crashed pooler does to an app mid-request. Returns how many were cut.
   */
  terminateAppBackends: (database: string, applicationName?: string) => Promise<number>;
  close: () => Promise<void>;
}

/** A SQL client of the test's own on `url` (the app's database, `schema` first on its search path). */
export async function openSqlProbe(url: string, schema = 'public'): Promise<SqlProbe> {
  const client = new Client({ connectionString: url, application_name: CHAOS_SQL_APPLICATION });
  await client.connect();
  await client.query(`SELECT set_config('search_path', $1, false)`, [
    `"${schema.replace(/"/g, '')}", public`,
  ]);
  return {
    query: async <T>(text: string, params: unknown[] = []) => (await client.query(text, params)).rows as T[],
    terminateAppBackends: async (database: string, applicationName?: string) => {
      const { rows } = await client.query<{ n: number }>(
        `SELECT count(*) FILTER (WHERE pg_terminate_backend(pid))::int AS n FROM pg_stat_activity
         WHERE datname = $1 AND pid <> pg_backend_pid() AND backend_type = 'client backend'
           AND application_name NOT IN ($2, 'tessera-test-harness')
           AND ($3::text IS NULL OR application_name = $3)`,
        [database, CHAOS_SQL_APPLICATION, applicationName ?? null],
      );
      return rows[0]?.n ?? 0;
    },
    close: () => client.end(),
  };
}
