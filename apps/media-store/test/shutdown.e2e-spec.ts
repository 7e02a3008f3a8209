import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describeShutdownAfterBoot, migratorFor, TEST_INTERNAL_SERVICE_TOKEN } from '@tessera/testing';
import { databaseOptions } from '../src/database/database';

/** The built media-store stopped by SIGTERM right after it reports started shuts down cleanly (decision 0465). */
let fsRoot = '';
describeShutdownAfterBoot(
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
