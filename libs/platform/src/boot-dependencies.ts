import Redis from 'ioredis';
import { Client } from 'pg';
import { withTimeout } from './redis';

/**
 * How long a process being started waits for Redis and Postgres to answer before it gives up (decision 0470): a
 * dependency that is down at boot stops the process, and its supervisor (Kubernetes, compose's restart policy)
 * starts it again later.
 */
export const BOOT_WAIT_MS = 3000;

/** Between two attempts of a boot check. */
const ATTEMPT_EVERY_MS = 500;

/** A dependency the process cannot start without did not answer: one line for stderr, no stack (runMain). */
export class DependencyUnavailableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DependencyUnavailableError';
  }
}

/** Where a Redis or Postgres URL points, without its user name or password (and, for Postgres, with its database). */
export function serviceAddress(url: string): string {
  const parsed = new URL(url);
  const port = parsed.port || (parsed.protocol.startsWith('redis') ? '6379' : '5432');
  return `${parsed.protocol}//${parsed.hostname}:${port}${parsed.protocol.startsWith('postgres') ? parsed.pathname : ''}`;
}

/**
 * One connection and one PING within `timeoutMs`; rejects with the connection's own error (ECONNREFUSED, NOAUTH,
 * a connect timeout), or says that nothing answered: a Redis that accepts the connection and never replies (hung,
 * or something else on its port) fails the check like an unreachable one (decision 0478). ioredis's
 * connectTimeout ends when the socket connects, and its commands have no timeout of their own.
 */
async function pingRedis(url: string, timeoutMs: number): Promise<void> {
  let connectionError: Error | undefined;
  const redis = new Redis(url, {
    lazyConnect: true,
    retryStrategy: () => null,
    maxRetriesPerRequest: 0,
    enableOfflineQueue: false,
    connectTimeout: Math.max(100, timeoutMs),
    connectionName: 'boot-check',
  });
  redis.on('error', (err: Error) => (connectionError ??= err));
  try {
    // Bounded here: a disconnect does not end a connection still waiting for its first reply (it waits for the
    // server to close its side), so the check gives up on it rather than waiting.
    await withTimeout(
      redis.connect().then(() => redis.ping()),
      timeoutMs,
      'the connection and its PING',
    ).catch((err: Error) => {
      throw connectionError ?? err;
    });
  } finally {
    redis.disconnect();
  }
}

/** One connection and one `SELECT 1`; rejects with the server's or the socket's error (a wrong password, no such database). */
async function pingPostgres(url: string, timeoutMs: number): Promise<void> {
  const client = new Client({
    connectionString: url,
    connectionTimeoutMillis: Math.max(100, Math.ceil(timeoutMs)),
    application_name: 'boot-check',
  });
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.query('SELECT 1');
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** Tries `check` until it answers or `waitMs` is spent; then throws one line naming `what` and the last error. */
async function untilAnswered(
  what: string,
  setting: string,
  check: (timeoutMs: number) => Promise<void>,
  waitMs: number,
): Promise<void> {
  const deadline = Date.now() + waitMs;
  for (;;) {
    try {
      await check(deadline - Date.now());
      return;
    } catch (err) {
      const left = deadline - Date.now();
      if (left <= 0)
        throw new DependencyUnavailableError(
          `${what} did not answer within ${waitMs / 1000} s (${(err as Error).message}); ` +
            `check ${setting} and that it is up.`,
        );
      await new Promise((resolve) => setTimeout(resolve, Math.min(ATTEMPT_EVERY_MS, left)));
    }
  }
}

/**
 * Waits until Redis answers a PING and Postgres a `SELECT 1`, both at once, for at most `waitMs`, before anything
 * else of the process starts. Every process needs both (queues, RPC and rate limits; its schema). One that cannot
 * reach them at boot throws a DependencyUnavailableError naming each address (never a password) and its last
 * error, and runMain exits 1 with that one line. Without it, the processes that serve RPC exited 1 with ioredis's
 * "Connection is closed." and its stack, the verification worker waited without listening, the custody worker came
 * up unready (decision 0470), and a Postgres that was down printed TypeORM's retries and Nest's stacks.
 */
export async function requireDependencies(
  env: { DATABASE_URL: string; REDIS_URL: string },
  waitMs = BOOT_WAIT_MS,
): Promise<void> {
  const results = await Promise.allSettled([
    untilAnswered(
      `Redis at ${serviceAddress(env.REDIS_URL)}`,
      'REDIS_URL',
      (t) => pingRedis(env.REDIS_URL, t),
      waitMs,
    ),
    untilAnswered(
      `Postgres at ${serviceAddress(env.DATABASE_URL)}`,
      'DATABASE_URL',
      (t) => pingPostgres(env.DATABASE_URL, t),
      waitMs,
    ),
  ]);
  const failed = results.flatMap((r) => (r.status === 'rejected' ? [(r.reason as Error).message] : []));
  if (failed.length > 0)
    throw new DependencyUnavailableError(`${failed.join(' ')} Exiting, to be restarted.`);
}
