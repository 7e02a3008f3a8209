import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  createTestEnvironment,
  migratorFor,
  TEST_INTERNAL_SERVICE_TOKEN,
  type TestEnvironment,
  uncleanStopsAfterBoot,
} from '@tessera/testing';
import { databaseOptions } from '../src/database/database';

/**
 * The built media-store (dist/main.js, as operators run it) stopped by SIGTERM in the instant it reports started,
 * and a few milliseconds later, shuts down cleanly: exit code 0, nothing on stderr, no error line (decision 0465).
 */
const MAIN = join(__dirname, '../dist/main.js');

let env: TestEnvironment;
let fsRoot: string;

beforeAll(async () => {
  if (!existsSync(MAIN))
    throw new Error(`${MAIN} is missing: run pnpm --filter @tessera/media-store build first`);
  env = await createTestEnvironment([
    migratorFor(databaseOptions, join(__dirname, '../src/database/migrations')),
  ]);
  fsRoot = mkdtempSync(join(tmpdir(), 'tessera-media-'));
}, 60_000);
afterAll(async () => {
  await env?.teardown();
  if (fsRoot) rmSync(fsRoot, { recursive: true, force: true });
});

it('shuts down cleanly when stopped right after it reports started', async () => {
  const processEnv = {
    ...env.env,
    INTERNAL_SERVICE_TOKEN: TEST_INTERNAL_SERVICE_TOKEN,
    MEDIA_FS_ROOT: fsRoot,
  };
  expect(await uncleanStopsAfterBoot(MAIN, processEnv)).toEqual([]);
}, 120_000);
