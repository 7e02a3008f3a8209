import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The built dispatcher (dist/main.js, as operators run it) refuses to boot when WEBHOOK_LEASE_MS cannot hold a
 * whole request of WEBHOOK_TIMEOUT_MS (decision 0452): it exits 1 and says which setting to change.
 */
const MAIN = join(__dirname, '../dist/main.js');
/**
 * How long a refusal may take to come: loading the app and reading its settings. A loaded CI machine once took
 * over 10 s (both cases ended killed, code null); a refusal still ends the wait as soon as it comes.
 */
const BOOT_WAIT_MS = 30_000;

function boot(extra: Record<string, string>): Promise<{ code: number | null; stderr: string }> {
  const child = spawn(process.execPath, [MAIN], {
    env: {
      PATH: process.env.PATH,
      DATABASE_URL: process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/tessera',
      REDIS_URL: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
      SECRETS_MASTER_KEY: randomBytes(32).toString('base64'),
      PORT: '0',
      ...extra,
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
  return new Promise((resolve) => {
    // A dispatcher that boots does not exit by itself: stopped after BOOT_WAIT_MS, it answers code null.
    const timer = setTimeout(() => child.kill('SIGKILL'), BOOT_WAIT_MS);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stderr });
    });
  });
}

beforeAll(() => {
  if (!existsSync(MAIN))
    throw new Error(`${MAIN} is missing: run pnpm --filter @tessera/webhook-dispatcher build first`);
});

it('refuses a lease shorter than the request timeout and its margin, naming the least lease', async () => {
  const { code, stderr } = await boot({ WEBHOOK_LEASE_MS: '2000', WEBHOOK_TIMEOUT_MS: '5000' });
  expect(code).toBe(1);
  expect(stderr).toContain('Invalid environment configuration');
  expect(stderr).toContain('WEBHOOK_LEASE_MS: must be at least 5556 with WEBHOOK_TIMEOUT_MS=5000');
}, 40_000);

it('refuses the default timeout with a lease below 6 s', async () => {
  const { code, stderr } = await boot({ WEBHOOK_LEASE_MS: '5500' });
  expect(code).toBe(1);
  expect(stderr).toContain('WEBHOOK_LEASE_MS: must be at least 5556 with WEBHOOK_TIMEOUT_MS=5000');
}, 40_000);
