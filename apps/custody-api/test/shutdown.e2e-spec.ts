import { join } from 'node:path';
import { describeShutdownAfterBoot } from '@tessera/testing';
import { migrator } from './support';

/**
 * The built custody-api processes stopped by SIGTERM right after they report started shut down cleanly (decision
 * 0465). The worker's BullMQ worker was still connecting then, and closing it under its version check printed an
 * unhandled "Connection is closed." and exited 1.
 */
describeShutdownAfterBoot('@tessera/custody-api', migrator, {
  API: join(__dirname, '../dist/main.js'),
  worker: join(__dirname, '../dist/worker.js'),
});
