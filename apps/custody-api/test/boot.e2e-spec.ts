import { join } from 'node:path';
import { describeServiceBoot, migratorFor } from '@tessera/testing';
import { AppModule } from '../src/app.module';
import { WorkerModule } from '../src/worker.module';
import { loadEnv } from '../src/config/env';
import { databaseOptions } from '../src/database/database';

describeServiceBoot(
  'custody-api',
  migratorFor(databaseOptions, join(__dirname, '../src/database/migrations')),
  (env) => AppModule.forRoot(loadEnv(env)),
);

describeServiceBoot(
  'custody-worker',
  migratorFor(databaseOptions, join(__dirname, '../src/database/migrations')),
  (env) => WorkerModule.forRoot(loadEnv(env)),
  { rpc: false },
);
