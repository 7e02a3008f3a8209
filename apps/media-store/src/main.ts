import 'reflect-metadata';
import { bootstrapHttp, migrateServiceSchema, requireDependencies, runMain } from '@tessera/platform';
import { AppModule } from './app.module';
import { loadEnv } from './config/env';
import { databaseOptions } from './database/database';
import { FsBlobRepository } from './modules/resources/blobs/fs-blob.repository';

runMain(async () => {
  const env = loadEnv();
  await requireDependencies(env);
  if (env.MEDIA_STORAGE === 'fs') await new FsBlobRepository(env.MEDIA_FS_ROOT).requireWritable();
  if (env.MIGRATE_ON_BOOT) await migrateServiceSchema(databaseOptions(env.DATABASE_URL));
  await bootstrapHttp(AppModule.forRoot(env), { port: env.PORT, host: env.HOST });
});
