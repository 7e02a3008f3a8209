import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { createTestEnvironment, type TestEnvironment, uncleanStopsAfterBoot } from '@tessera/testing';
import { migrator } from './harness';

/**
 * The built verification-api processes (dist/main.js and dist/worker.js, as operators run them) stopped by SIGTERM in the
 * instant they report started, and a few milliseconds later, shut down cleanly: exit code 0, nothing on stderr,
 * no error line (decision 0465). The worker's BullMQ worker was still connecting then, and closing it under its
 * version check printed an unhandled "Connection is closed." and exited 1.
 */
const MAIN = join(__dirname, '../dist/main.js');
const WORKER = join(__dirname, '../dist/worker.js');

let env: TestEnvironment;

beforeAll(async () => {
  for (const entry of [MAIN, WORKER])
    if (!existsSync(entry))
      throw new Error(`${entry} is missing: run pnpm --filter @tessera/verification-api build first`);
  env = await createTestEnvironment([migrator]);
}, 60_000);
afterAll(() => env?.teardown());

it.each([
  ['API', MAIN],
  ['worker', WORKER],
])(
  'the %s role shuts down cleanly when stopped right after it reports started',
  async (_role, entry) => {
    expect(await uncleanStopsAfterBoot(entry, { ...env.env, WORKER_PORT: '0' })).toEqual([]);
  },
  120_000,
);
