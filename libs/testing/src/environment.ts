import { createTestDatabase, type SchemaMigrator, type TestDatabase } from './database';
import { createRedisNamespace, TEST_REDIS_URL, type TestRedisNamespace } from './redis';

export interface TestEnvironment {
  db: TestDatabase;
  redis: TestRedisNamespace;
  /** The environment variables an app under test reads (merge your own on top). */
  env: Record<string, string>;
  teardown: () => Promise<void>;
}

export const TEST_MASTER_KEY = Buffer.alloc(32, 7).toString('base64');
export const TEST_ADMIN_TOKEN = 'test-admin-token-0123456789';

/** A database and a Redis namespace for one test file, with the env that points an app at them. */
export async function createTestEnvironment(migrators: SchemaMigrator[]): Promise<TestEnvironment> {
  const [db, redis] = [await createTestDatabase(migrators), createRedisNamespace()];
  return {
    db,
    redis,
    env: {
      NODE_ENV: 'test',
      DATABASE_URL: db.url,
      REDIS_URL: TEST_REDIS_URL,
      QUEUE_PREFIX: redis.prefix,
      PORT: '0',
      HOST: '127.0.0.1',
      LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
      ADMIN_TOKEN: TEST_ADMIN_TOKEN,
      SECRETS_MASTER_KEY: TEST_MASTER_KEY,
      DB_POOL_SIZE: '5',
    },
    teardown: async () => {
      await Promise.allSettled([db.drop(), redis.cleanup()]);
    },
  };
}
