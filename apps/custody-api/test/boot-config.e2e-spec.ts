import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { ASSETS, client, createKey, createTenant, type Harness, sql, startHarness } from './support';

/**
 * The built custody processes (dist/main.js and dist/worker.js, as operators run them) without
 * CHAIN_EVM_RPC_URL (decision 0462): quiet on a database with no live ETH/USDT wallet; one warn line naming the
 * setting and what it costs once live ETH/USDT wallets exist; and a production worker refuses to boot (exit 1,
 * the setting named) once a worker has worked a node in the database.
 */
const MAIN = join(__dirname, '../dist/main.js');
const WORKER = join(__dirname, '../dist/worker.js');
const WARNING = 'CHAIN_EVM_RPC_URL is not set, but the EVM chain is in use here';

interface Boot {
  /** The exit code: 0 when the process booted and was stopped (a clean shutdown), 1 when it refused to boot. */
  code: number | null;
  lines: Record<string, unknown>[];
  stdout: string;
  stderr: string;
}

let h: Harness;

/** Runs the built entry point on the suite's database until it exits or its /health answers, then stops it. */
function boot(entry: string, extra: Record<string, string> = {}): Promise<Boot> {
  const child = spawn(process.execPath, [entry], {
    env: { PATH: process.env.PATH, ...h.env.env, PORT: '0', WORKER_PORT: '0', LOG_LEVEL: 'info', ...extra },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  let stopping = false;
  child.stdout!.on('data', (c: Buffer) => {
    stdout += c.toString('utf8');
    // Listening: the boot (and its check) is over. Stopped in the same instant, it shuts down cleanly even with
    // the connections its boot opened still on their way (decision 0465).
    if (!stopping && /Nest application successfully started/.test(stdout)) {
      stopping = true;
      child.kill('SIGTERM');
    }
  });
  child.stderr!.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      const lines = stdout
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as Record<string, unknown>);
      resolve({ code: signal ? null : code, lines, stdout, stderr });
    });
  });
}

const warnings = (b: Boot) =>
  b.lines.filter((l) => typeof l.msg === 'string' && (l.msg as string).startsWith(WARNING));

beforeAll(async () => {
  for (const entry of [MAIN, WORKER])
    if (!existsSync(entry))
      throw new Error(`${entry} is missing: run pnpm --filter @tessera/custody-api build first`);
  h = await startHarness({}, { worker: false });
}, 60_000);
afterAll(() => h?.close());

it('boots quietly without CHAIN_EVM_RPC_URL while no live ETH/USDT wallet exists', async () => {
  const tenantId = await createTenant(h.api);
  const sandbox = client(h.api, await createKey(h.api, tenantId));
  const vault = await sandbox.post('/vaults', { externalId: 'sandbox', name: 'Sandbox' }).expect(201);
  await sandbox.post(`/vaults/${vault.body.id}/wallets`, { assetId: ASSETS.ETH }).expect(201);

  for (const entry of [MAIN, WORKER]) {
    const b = await boot(entry);
    expect(b.stderr).toBe('');
    expect(b.code).toBe(0);
    expect(warnings(b)).toEqual([]);
  }
}, 60_000);

it('warns once, naming CHAIN_EVM_RPC_URL and its cost in each role, once live ETH wallets exist', async () => {
  const tenantId = await createTenant(h.api, 'Live');
  const live = client(h.api, await createKey(h.api, tenantId, { environment: 'live' }));
  const vault = await live.post('/vaults', { externalId: 'live', name: 'Live' }).expect(201);
  await live.post(`/vaults/${vault.body.id}/wallets`, { assetId: ASSETS.ETH }).expect(201);

  const api = await boot(MAIN);
  expect(api.code).toBe(0);
  expect(api.stderr).toBe('');
  const [apiLine, ...more] = warnings(api);
  expect(more).toEqual([]);
  expect(apiLine).toMatchObject({
    level: 'warn',
    setting: 'CHAIN_EVM_RPC_URL',
    role: 'custody-api',
    liveEvmWallets: 1,
    chainRecords: false,
  });
  expect(apiLine.msg).toContain('a cancel reads evm_send_intents for every withdrawal');

  const worker = await boot(WORKER);
  expect(worker.code).toBe(0);
  expect(worker.stderr).toBe('');
  expect(warnings(worker)).toHaveLength(1);
  expect(warnings(worker)[0]).toMatchObject({ level: 'warn', role: 'custody-worker', liveEvmWallets: 1 });
  expect(warnings(worker)[0].msg).toContain(
    'deposits on the chain are not credited and withdrawals complete without being sent',
  );

  // No secret reaches the line: not the master key, the admin token or the database URL.
  for (const line of [apiLine, warnings(worker)[0]]) {
    const text = JSON.stringify(line);
    for (const secret of [h.env.env.SECRETS_MASTER_KEY, h.env.env.ADMIN_TOKEN, h.env.env.DATABASE_URL])
      expect(text).not.toContain(secret);
  }
}, 60_000);

it('a production worker refuses to boot without CHAIN_EVM_RPC_URL once a worker has worked a node here', async () => {
  await sql(h, `INSERT INTO "evm_cursors" ("chain_id", "next_block") VALUES (31337, 42)`);

  const worker = await boot(WORKER, { NODE_ENV: 'production' });
  expect(worker.code).toBe(1);
  expect(worker.stderr).toContain('Invalid environment configuration');
  expect(worker.stderr).toContain(
    'CHAIN_EVM_RPC_URL: not set, but this database holds EVM chain records (a scan cursor or EVM transfers)',
  );
  expect(worker.stdout).not.toMatch(/Nest application successfully started/);

  // The API role only warns: without the node its cancels read evm_send_intents, which stays safe.
  const api = await boot(MAIN, { NODE_ENV: 'production' });
  expect(api.code).toBe(0);
  expect(api.stderr).toBe('');
  expect(warnings(api)).toHaveLength(1);
  expect(warnings(api)[0]).toMatchObject({ role: 'custody-api', chainRecords: true });

  // Outside production (`pnpm start` without --chain evm after a run with it) the worker warns and runs.
  const devWorker = await boot(WORKER, { NODE_ENV: 'development' });
  expect(devWorker.code).toBe(0);
  expect(devWorker.stderr).toBe('');
  expect(warnings(devWorker)).toHaveLength(1);
  expect(warnings(devWorker)[0]).toMatchObject({ role: 'custody-worker', chainRecords: true });
}, 60_000);
