import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { createTestEnvironment, type TestEnvironment, uncleanStopsAfterBoot } from '@tessera/testing';
import { dispatcherMigrator } from './support/harness';

/**
 * The built dispatcher (dist/main.js, as operators run it) stopped by SIGTERM in the instant it reports started,
 * and a few milliseconds later, shuts down cleanly: exit code 0, nothing on stderr, no error line (decision 0465).
 * Its BullMQ worker was still connecting then, and closing it under its version check printed an unhandled
 * "Connection is closed." and exited 1.
 */
const MAIN = join(__dirname, '../dist/main.js');

let env: TestEnvironment;

beforeAll(async () => {
  if (!existsSync(MAIN))
    throw new Error(`${MAIN} is missing: run pnpm --filter @tessera/webhook-dispatcher build first`);
  env = await createTestEnvironment([dispatcherMigrator()]);
}, 60_000);
afterAll(() => env?.teardown());

it('shuts down cleanly when stopped right after it reports started', async () => {
  expect(await uncleanStopsAfterBoot(MAIN, env.env)).toEqual([]);
}, 120_000);
