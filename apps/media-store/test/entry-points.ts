import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type ExtraEnv, migratorFor, TEST_INTERNAL_SERVICE_TOKEN } from '@tessera/testing';
import { databaseOptions } from '../src/database/database';

/** The built media-store as the suites that run entry points take it: its migrator, its one role, and its env. */
export const MEDIA_STORE = '@tessera/media-store';
export const mediaStoreMigrator = () =>
  migratorFor(databaseOptions, join(__dirname, '../src/database/migrations'));
export const MEDIA_STORE_ROLES = { 'media-store': join(__dirname, '../dist/main.js') };

/** The internal token and a throwaway MEDIA_FS_ROOT, removed after the suite. */
export function mediaStoreEnv(): ExtraEnv {
  let fsRoot = '';
  return {
    setUp: () => {
      fsRoot = mkdtempSync(join(tmpdir(), 'tessera-media-'));
      return { INTERNAL_SERVICE_TOKEN: TEST_INTERNAL_SERVICE_TOKEN, MEDIA_FS_ROOT: fsRoot };
    },
    tearDown: () => {
      if (fsRoot) rmSync(fsRoot, { recursive: true, force: true });
    },
  };
}
