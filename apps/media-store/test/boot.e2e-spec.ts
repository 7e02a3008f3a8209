import { join } from 'node:path';
import { describeServiceBoot, migratorFor, TEST_INTERNAL_SERVICE_TOKEN } from '@tessera/testing';
import { AppModule } from '../src/app.module';
import { loadEnv } from '../src/config/env';
import { databaseOptions } from '../src/database/database';

describeServiceBoot(
  'media-store',
  migratorFor(databaseOptions, join(__dirname, '../src/database/migrations')),
  (env) => AppModule.forRoot(loadEnv({ ...env, INTERNAL_SERVICE_TOKEN: TEST_INTERNAL_SERVICE_TOKEN })),
);
