import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describeRedisOutage, migratorFor, TEST_INTERNAL_SERVICE_TOKEN } from '@tessera/testing';
import { databaseOptions } from '../src/database/database';

/**
 * The built media-store while Redis is unreachable (decision 0470): started, it exits 1 with one line naming Redis
 * (it exited 1 with a stack); stopped, it exits 0 at once.
 */
let fsRoot = '';
describeRedisOutage(
  '@tessera/media-store',
  migratorFor(databaseOptions, join(__dirname, '../src/database/migrations')),
  { 'media-store': join(__dirname, '../dist/main.js') },
  {
    setUp: () => {
      fsRoot = mkdtempSync(join(tmpdir(), 'tessera-media-'));
      return { INTERNAL_SERVICE_TOKEN: TEST_INTERNAL_SERVICE_TOKEN, MEDIA_FS_ROOT: fsRoot };
    },
    tearDown: () => {
      if (fsRoot) rmSync(fsRoot, { recursive: true, force: true });
    },
  },
);
