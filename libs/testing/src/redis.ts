import { randomBytes } from 'node:crypto';
import Redis from 'ioredis';

export const TEST_REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

export interface TestRedisNamespace {
  /** Use as QUEUE_PREFIX: queues become `{prefix}:…`, service keys `prefix:…`, RPC channels `prefix:…`. */
  prefix: string;
  cleanup: () => Promise<void>;
}

/** A key prefix of its own for one test file; cleanup deletes every key under it. */
export function createRedisNamespace(): TestRedisNamespace {
  const prefix = `t${process.pid}x${randomBytes(4).toString('hex')}`;
  return {
    prefix,
    cleanup: async () => {
      const redis = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: 1 });
      try {
        for (const pattern of [`${prefix}:*`, `{${prefix}}:*`]) {
          let cursor = '0';
          do {
            const [next, keys] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 500);
            if (keys.length > 0) await redis.del(...keys);
            cursor = next;
          } while (cursor !== '0');
        }
      } finally {
        redis.disconnect();
      }
    },
  };
}
