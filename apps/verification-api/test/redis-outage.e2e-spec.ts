import { join } from 'node:path';
import { describeRedisOutage } from '@tessera/testing';
import { migrator } from './harness';

/**
 * The built verification-api processes while Redis is unreachable (decision 0470): started, each exits 1 with one
 * line naming Redis (the API exited 1 with a stack, the worker waited without listening); stopped, each exits 0
 * at once.
 */
describeRedisOutage('@tessera/verification-api', migrator, {
  API: join(__dirname, '../dist/main.js'),
  worker: join(__dirname, '../dist/worker.js'),
});
