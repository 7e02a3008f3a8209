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
 * The throttle of one connection's outage lines (decisions 0468, 0478): `note` says whether this occurrence is
 * logged (the first of an outage, then at most one per REDIS_ERROR_LOG_EVERY_MS) and how many it left out since
 * the last one; `back` ends the outage and answers how long it lasted, or undefined when there was none.
 */
function outageThrottle(): {
  note: () => { log: boolean; skipped: number };
  back: () => number | undefined;
} {
  let failingSince: number | undefined;
  let loggedAt = -Infinity;
  let skipped = 0;
  return {
    note: () => {
      const now = Date.now();
      failingSince ??= now;
      if (now - loggedAt < REDIS_ERROR_LOG_EVERY_MS) {
        skipped += 1;
        return { log: false, skipped };
      }
      const left = skipped;
      loggedAt = now;
      skipped = 0;
      return { log: true, skipped: left };
    },
    back: () => {
      if (failingSince === undefined) return undefined;
      const downMs = Date.now() - failingSince;
      failingSince = undefined;
      loggedAt = -Infinity;
      skipped = 0;
      return downMs;
    },
  };
}

/**
 * The throttled log of one connection's errors (logConnectionErrors): `error` for each error, `ready` once it
 * is connected again. BullMQ workers report their connections' errors through it too (decision 0470).
 */
export function connectionErrorLog(connection: string): { error: (err: Error) => void; ready: () => void } {
  const throttle = outageThrottle();
  return {
    error: (err: Error) => {
      const { log, skipped } = throttle.note();
      if (log) logger.warn({ connection, err: err.message, skipped }, 'Redis connection error');
    },
    ready: () => {
      const downMs = throttle.back();
      if (downMs !== undefined) logger.log({ connection, downMs }, 'Redis connection ready again');
    },
  };
}

/**
 * The throttled log of one connection's reconnection attempts (decision 0478), for Nest's Redis transport, which
 * logged `Reconnecting to Redis...` at info on every attempt of an outage (every 100 ms × attempt, at most every
 * 2 s): the first attempt, then at most one line per REDIS_ERROR_LOG_EVERY_MS with the attempt's number and how
 * many it left out. `ready` ends the outage without a line of its own: the connection's error log
 * (logConnectionErrors) already says once that it is ready again, and how long it was down.
 */
export function reconnectLog(connection: string): { reconnecting: () => void; ready: () => void } {
  const throttle = outageThrottle();
  let attempt = 0;
  return {
    reconnecting: () => {
      attempt += 1;
      const { log, skipped } = throttle.note();
      if (log) logger.log({ connection, attempt, skipped }, 'Reconnecting to Redis...');
    },
    ready: () => {
      throttle.back();
      attempt = 0;
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
 * How long a shutdown waits for a ready connection to answer a PING before it counts Redis as away
 * (probeUnreachable, decision 0478). Redis answers in well under a millisecond on a healthy network.
 */
export const SHUTDOWN_PROBE_MS = 1000;

const probes = new WeakMap<Redis, Promise<boolean>>();

/**
 * isUnreachable, after asking a connection that says it is ready whether Redis still answers (decision 0478): a
 * Redis that is hung, or a network that drops packets without resetting the connection, raises no error, so the
 * connection stays `ready`, and a shutdown that waits for it (a worker's drain, a QUIT) waits out
 * SHUTDOWN_TIMEOUT_MS. A PING not answered within `ms` marks the connection unreachable until it is ready
 * again, and the shutdown then goes on as in an outage (decision 0470). Callers at once share one PING.
 */
export function probeUnreachable(redis: Redis, ms = SHUTDOWN_PROBE_MS): Promise<boolean> {
  if (isUnreachable(redis)) return Promise.resolve(true);
  if (redis.status !== 'ready') return Promise.resolve(false);
  let probe = probes.get(redis);
  if (!probe) {
    probe = withTimeout(redis.ping(), ms, 'PING')
      .then(
        () => false,
        () => {
          lostSinceReady.add(redis);
          return true;
        },
      )
      .finally(() => probes.delete(redis));
    probes.set(redis, probe);
  }
  return probe;
}

/**
 * Waits for `pass`, a pass in flight at shutdown that reads Postgres and then enqueues, unless Redis does not
 * answer (probeUnreachable): such a pass would wait for Redis to come back, and nothing is lost by leaving it,
 * since what it enqueues stays in Postgres for the next process's pass (decisions 0491, 0492). It must hold no
 * database connection while it enqueues, or closing the pool would wait for it instead.
 */
export async function settledUnlessRedisAway(pass: Promise<unknown> | null, redis: Redis): Promise<void> {
  if (!pass) return;
  const settled = pass.then(
    () => undefined,
    () => undefined,
  );
  await Promise.race([settled, probeUnreachable(redis).then((away) => (away ? undefined : settled))]);
}

/**
 * Closes a connection without waiting for a Redis that is away (decisions 0470, 0478): QUIT when it is ready and
 * answers (its reply says Redis has done with it), else a disconnect, which also stops its reconnection attempts.
 * QUIT on a connection that is reconnecting waits for Redis to come back, on one that has ended it fails, and on
 * one whose Redis hangs it waits for ever.
 */
export async function closeConnection(redis: Redis): Promise<void> {
  if (redis.status === 'ready' && !(await probeUnreachable(redis)))
    await withTimeout(redis.quit(), SHUTDOWN_PROBE_MS, 'QUIT').catch(() => redis.disconnect());
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
