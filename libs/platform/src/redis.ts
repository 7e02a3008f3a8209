import Redis, { type RedisOptions } from 'ioredis';

/**
 * One ioredis connection. `maxRetriesPerRequest: null` is what BullMQ requires; callers that must
 * not hang (health checks) wrap their command in `withTimeout`.
 */
export function createRedis(url: string, options: RedisOptions = {}): Redis {
  return new Redis(url, { maxRetriesPerRequest: null, enableReadyCheck: true, ...options });
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
