import Redis from 'ioredis';

/**
 * How long a process being started waits for Redis to answer before it gives up (decision 0470). About what
 * TypeORM's three attempts a second apart give Postgres: a dependency that is down at boot stops the process, and
 * its supervisor (Kubernetes, compose's restart policy) starts it again later.
 */
export const REDIS_BOOT_WAIT_MS = 3000;

/** Between two attempts of the boot check. */
const ATTEMPT_EVERY_MS = 500;

/** A dependency the process cannot start without did not answer: one line for stderr, no stack (runMain). */
export class DependencyUnavailableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DependencyUnavailableError';
  }
}

/** Where a Redis URL points, without its user name or password. */
export function redisAddress(url: string): string {
  const parsed = new URL(url);
  return `${parsed.protocol}//${parsed.hostname}:${parsed.port || 6379}`;
}

/** One connection and one PING; rejects with the connection's own error (ECONNREFUSED, NOAUTH, a timeout). */
async function pingOnce(url: string, timeoutMs: number): Promise<void> {
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
    await redis.connect();
    await redis.ping();
  } catch (err) {
    throw connectionError ?? err;
  } finally {
    redis.disconnect();
  }
}

/**
 * Waits until Redis answers a PING, for at most `waitMs`, before anything else of the process starts. Every
 * process needs Redis (queues, RPC, rate limits): one that cannot reach it at boot throws a
 * DependencyUnavailableError naming the address (never the password) and the last error, and runMain exits 1
 * with that one line, as a process does when Postgres is down at boot. Without it, the processes that serve RPC
 * exited 1 with ioredis's "Connection is closed." and its stack, the verification worker waited without
 * listening, and the custody worker came up unready (decision 0470).
 */
export async function requireRedis(url: string, waitMs = REDIS_BOOT_WAIT_MS): Promise<void> {
  const deadline = Date.now() + waitMs;
  for (;;) {
    try {
      await pingOnce(url, deadline - Date.now());
      return;
    } catch (err) {
      const left = deadline - Date.now();
      if (left <= 0) {
        throw new DependencyUnavailableError(
          `Redis at ${redisAddress(url)} did not answer within ${waitMs / 1000} s ` +
            `(${(err as Error).message}); check REDIS_URL and that Redis is up. Exiting, to be restarted.`,
        );
      }
      await new Promise((resolve) => setTimeout(resolve, Math.min(ATTEMPT_EVERY_MS, left)));
    }
  }
}
