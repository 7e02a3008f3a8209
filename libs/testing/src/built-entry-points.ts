import { existsSync } from 'node:fs';
import type { SchemaMigrator } from './database';
import { createTestEnvironment, type TestEnvironment } from './environment';

/** What a service's built entry points need beyond the test environment (set up before the suite, cleaned after). */
export interface ExtraEnv {
  setUp?: () => Record<string, string>;
  tearDown?: () => void;
}

/**
 * The hooks of a suite that runs a service's built entry points (`roles`: role name → dist file) as operators do:
 * every entry point must exist (`pnpm --filter <service> build`), and the suite gets its own database and Redis
 * namespace. Answers the environment to start an entry point with, available once the suite has started: the test
 * environment, then `overrides`, then what `extraEnv` set up.
 */
export function builtEntryPointsSuite(
  service: string,
  migrator: SchemaMigrator,
  roles: Record<string, string>,
  extraEnv: ExtraEnv = {},
): (overrides?: Record<string, string>) => Record<string, string> {
  let env: TestEnvironment;
  let extra: Record<string, string> = {};
  beforeAll(async () => {
    for (const entry of Object.values(roles))
      if (!existsSync(entry))
        throw new Error(`${entry} is missing: run pnpm --filter ${service} build first`);
    env = await createTestEnvironment([migrator]);
    extra = extraEnv.setUp?.() ?? {};
  }, 60_000);
  afterAll(async () => {
    await env?.teardown();
    extraEnv.tearDown?.();
  });
  return (overrides = {}) => ({ ...env.env, ...overrides, ...extra });
}
