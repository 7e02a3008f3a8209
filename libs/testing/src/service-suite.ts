import type { DynamicModule } from '@nestjs/common';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { migrateServiceSchema, outboxMigrationSources, type ServiceDatabaseOptions } from '@tessera/platform';
import { bootApp } from './app';
import type { SchemaMigrator } from './database';
import { createTestEnvironment, type TestEnvironment } from './environment';
import { TEST_REDIS_URL } from './redis';
import { assertHealthFollowsRedis, assertServiceBasics } from './service-checks';
import { startTcpProxy, type TcpProxy } from './tcp-proxy';

/** A SchemaMigrator from a service's `databaseOptions(url)` and its migrations folder. */
export function migratorFor(
  options: (url: string) => ServiceDatabaseOptions,
  migrationsDir: string,
): SchemaMigrator {
  return {
    schema: options('postgres://unused').schema,
    migrationsDir,
    sources: outboxMigrationSources,
    migrate: (url) => migrateServiceSchema(options(url)),
  };
}

/**
 * The boot suite every service runs: against its own cloned database and Redis namespace, with Redis
 * reached through a proxy so the test can cut it off.
 */
export function describeServiceBoot(
  service: string,
  migrator: SchemaMigrator,
  module: (env: Record<string, string>) => DynamicModule,
  opts: { rpc?: boolean } = {},
): void {
  describe(`${service} boots on real Postgres and Redis`, () => {
    let env: TestEnvironment;
    let proxy: TcpProxy;
    let app: NestFastifyApplication;

    beforeAll(async () => {
      env = await createTestEnvironment([migrator]);
      const redis = new URL(TEST_REDIS_URL);
      proxy = await startTcpProxy(redis.hostname, Number(redis.port || 6379));
      app = await bootApp(module({ ...env.env, REDIS_URL: proxy.url('redis') }), { rpc: opts.rpc });
    });

    // Closing waits for the Redis connections that the cut-off test made reconnect; on a loaded CI machine that
    // can take longer than jest's default 30 s hook budget.
    // A close still waiting on a reconnect after 60 s is abandoned, so the suite's own teardown always runs.
    afterAll(async () => {
      await Promise.race([app?.close(), new Promise((r) => setTimeout(r, 60_000).unref())]);
      await proxy?.close();
      await env?.teardown();
    }, 180_000);

    it('reports Postgres and Redis up on /health, serves /metrics, echoes X-Request-Id and answers its RPC ping', async () => {
      const rpc = opts.rpc === false ? undefined : { redisUrl: TEST_REDIS_URL, namespace: env.redis.prefix };
      await assertServiceBasics(app, service, rpc);
    });

    it('answers 503 on /health while Redis is unreachable', async () => {
      await assertHealthFollowsRedis(app, proxy);
    });
  });
}
