import { join } from 'node:path';
import { describeShutdownAfterBoot } from '@tessera/testing';
import { migrator } from './harness';

/** The built verification-api processes stopped by SIGTERM right after they report started shut down cleanly (0465). */
describeShutdownAfterBoot('@tessera/verification-api', migrator, {
  API: join(__dirname, '../dist/main.js'),
  worker: join(__dirname, '../dist/worker.js'),
});
