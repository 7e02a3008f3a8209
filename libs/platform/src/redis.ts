import { Logger } from '@nestjs/common';
import Redis, { type RedisOptions } from 'ioredis';

const logger = new Logger('Redis');

/** While a connection keeps failing, it logs at most one line per this many milliseconds. */
export const REDIS_ERROR_LOG_EVERY_MS = 10_000;

/**
 * One ioredis connection. `maxRetriesPerRequest: null` is what BullMQ requires; callers that must
 * not hang (health checks) wrap their command in `withTimeout`. Its errors are logged (`logConnectionErrors`).
 */
export function createRedis(url: string, options: RedisOptions = {}): Redis {
  const redis = new Redis(url, { maxRetriesPerRequest: null, enableReadyCheck: true, ...options });
  logConnectionErrors(redis, options.connectionName ?? 'redis');
  return redis;
}

/**
 * Gives a connection its `error` listener. Without one, ioredis prints "[ioredis] Unhandled error event" and a
 * stack to stderr for every failed reconnection of an outage (decision 0468). Its errors go to the log instead:
 * the first at warn, then at most one line per REDIS_ERROR_LOG_EVERY_MS with how many it left out, and one line
 * once the connection is ready again. Commands still fail to their callers as before.
 */
export function logConnectionErrors(redis: Redis, connection: string): void {
  watchReachability(redis);
  const log = connectionErrorLog(connection);
  redis.on('error', log.error);
  redis.on('ready', log.ready);
}

/**
 * The throttled log of one connection's errors (logConnectionErrors): `error` for each error, `ready` once it
 * is connected again. BullMQ workers report their connections' errors through it too (decision 0470).
 */
export function connectionErrorLog(connection: string): { error: (err: Error) => void; ready: () => void } {
  let failingSince: number | undefined;
  let loggedAt = -Infinity;
  let skipped = 0;
  return {
    error: (err: Error) => {
      const now = Date.now();
      failingSince ??= now;
      if (now - loggedAt < REDIS_ERROR_LOG_EVERY_MS) {
        skipped += 1;
        return;
      }
      logger.warn({ connection, err: err.message, skipped }, 'Redis connection error');
      loggedAt = now;
      skipped = 0;
    },
    ready: () => {
      if (failingSince === undefined) return;
      logger.log({ connection, downMs: Date.now() - failingSince }, 'Redis connection ready again');
      failingSince = undefined;
      loggedAt = -Infinity;
      skipped = 0;
    },
  };
}

const CONNECTION_ERROR_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);

/** An error that says the connection to Redis failed or was lost, rather than that a command failed. */
export function isConnectionError(err: Error): boolean {
  const code = (err as NodeJS.ErrnoException).code;
  return (
    (code !== undefined && CONNECTION_ERROR_CODES.has(code)) ||
    err.message === 'Connection is closed.' ||
    err.name === 'MaxRetriesPerRequestError'
  );
}

const lostSinceReady = new WeakSet<Redis>();

/** Marks `redis` unreachable from its first error until it is ready again (isUnreachable). */
export function watchReachability(redis: Redis): void {
  redis.on('error', () => lostSinceReady.add(redis));
  redis.on('ready', () => lostSinceReady.delete(redis));
}

/**
 * True while Redis is away for this connection: it failed since it was last ready (watchReachability), or it is
 * waiting to reconnect or has ended. A connection still making its first connection is not (decision 0465: it is
 * let finish connecting).
 */
export function isUnreachable(redis: Redis): boolean {
  return lostSinceReady.has(redis) || ['reconnecting', 'close', 'end'].includes(redis.status);
}

/**
 * Closes a connection without waiting for a Redis that is away (decision 0470): QUIT when it is ready (its reply
 * says Redis has done with it), else a disconnect, which also stops its reconnection attempts. QUIT on a
 * connection that is reconnecting waits for Redis to come back, and on one that has ended it fails.
 */
export async function closeConnection(redis: Redis): Promise<void> {
  if (redis.status === 'ready') await redis.quit().catch(() => redis.disconnect());
  else redis.disconnect();
}

/**
 * BullMQ prefix wrapped in a hash tag, so every key of every queue lands in one Redis Cluster slot.
 * `tessera` becomes `{tessera}`.
 */
export function bullPrefix(queuePrefix: string): string {
  return `{${queuePrefix}}`;
}

/** Builds namespaced keys for the service's own Redis state (rate limits, replay cache). */
export class RedisKeys {
  constructor(private readonly prefix: string) {}

  key(...parts: string[]): string {
    return [this.prefix, ...parts].join(':');
  }
}

export function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} timed out after ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
