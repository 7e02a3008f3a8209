import 'reflect-metadata';
import { bootstrapHttp, migrateServiceSchema, requireDependencies, runMain } from '@tessera/platform';
import { loadEnv } from './config/env';
import { databaseOptions } from './database/database';
import { WorkerModule } from './worker.module';

/**
 * The verification worker role (`node dist/worker.js`, same image as the API): step checks, enrollment expiry
 * and the outbox relay. It serves only /health and /metrics, on WORKER_PORT, for probes.
 */
runMain(async () => {
  const env = loadEnv();
  await requireDependencies(env);
  if (env.MIGRATE_ON_BOOT) await migrateServiceSchema(databaseOptions(env.DATABASE_URL));
  await bootstrapHttp(WorkerModule.forRoot(env), { port: env.WORKER_PORT, host: env.HOST, rpc: false });
});
