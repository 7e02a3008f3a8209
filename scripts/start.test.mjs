// Host mode end to end: `pnpm start` brings every service to a healthy /health and stops them all on SIGINT.
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const base = 4700 + Math.floor(Math.random() * 200);
const ports = [base + 1, base + 2, base + 3, base + 4, base + 11, base + 12];

async function status(port) {
  try {
    return (await fetch(`http://127.0.0.1:${port}/health`)).status;
  } catch {
    return 'down';
  }
}

test(
  'pnpm start runs all services healthy, the README quick start works, and SIGINT stops them all',
  { timeout: 120_000 },
  async () => {
    const child = spawn('node', ['scripts/start.mjs', '--no-build'], {
      cwd: root,
      env: {
        ...process.env,
        TESSERA_PORT_BASE: String(base),
        QUEUE_PREFIX: `start-test-${base}`,
        LOG_LEVEL: 'warn',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));

    const deadline = Date.now() + 90_000;
    while (!output.includes('all services healthy') && Date.now() < deadline) {
      if (child.exitCode !== null) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    assert.match(output, /all services healthy/, output.slice(-3000));
    for (const port of ports) assert.equal(await status(port), 200, `port ${port}`);
    for (const name of [
      'verification-api',
      'verification-worker',
      'custody-api',
      'custody-worker',
      'webhook-dispatcher',
      'media-store',
    ]) {
      assert.match(output, new RegExp(`${name}\\s+http://localhost:\\d+`));
    }

    await quickStart();

    child.kill('SIGINT');
    const { code } = await exited;
    assert.equal(code, 0, output.slice(-3000));
    assert.match(output, /all services stopped/);
    for (const port of ports) assert.equal(await status(port), 'down', `port ${port} still answers`);
  },
);

/** The README's quick start on the running stack: `pnpm seed`, then its curl block with the exported values. */
async function quickStart() {
  const env = { ...process.env, TESSERA_PORT_BASE: String(base) };
  const seed = await promisify(execFile)('node', ['scripts/seed.mjs'], { cwd: root, env });
  const exported = Object.fromEntries(
    [...seed.stdout.matchAll(/^export (\w+)=(.*)$/gm)].map((m) => [m[1], m[2]]),
  );
  const json = JSON.parse(seed.stdout.slice(0, seed.stdout.indexOf('\n# paste')));
  assert.equal(json.custody.sandboxWalletBalance, '10');
  assert.deepEqual(json.custody.test.scopes.includes('sandbox:write'), true);

  const readme = readFileSync(join(root, 'README.md'), 'utf8');
  const block = /<!-- quickstart-curl[^>]*-->\s*```sh\n([\s\S]*?)```/.exec(readme)?.[1];
  assert.ok(block, 'README has no quickstart-curl block');
  const curl = await promisify(execFile)('bash', ['-euo', 'pipefail', '-c', block], {
    env: { ...process.env, ...exported },
  });
  const [levels, balance] = curl.stdout
    .trim()
    .split(/\n(?=\{)/)
    .map((line) => JSON.parse(line));
  assert.deepEqual(levels.items.map((l) => l.name).sort(), ['BASIC_KYB', 'BASIC_KYC']);
  assert.equal(balance.available, '10');
  assert.equal(balance.assetSymbol, 'ETH');
  await listenForTestEvent(env, exported);
}

/** `pnpm webhooks:listen` registers itself, then receives and verifies the custody `webhook.test` event. */
async function listenForTestEvent(env, exported) {
  const listener = spawn('node', ['scripts/webhooks-listen.mjs', '--api', 'custody', '--port', '0'], {
    cwd: root,
    env: { ...env, ...exported },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  listener.stdout.on('data', (d) => (out += d));
  listener.stderr.on('data', (d) => (out += d));
  try {
    await until(
      () => out.includes('[listen] ready'),
      () => out,
    );
    const { signRequest } = await import(join(root, 'libs/auth/dist/index.js'));
    const path = '/webhooks/outbound/test';
    const headers = signRequest(exported.TESSERA_CUSTODY_KEY, exported.TESSERA_CUSTODY_SECRET, {
      method: 'POST',
      pathWithQuery: path,
      body: '',
    });
    const res = await fetch(`${exported.TESSERA_CUSTODY_URL}${path}`, { method: 'POST', headers });
    assert.ok(res.ok, `POST ${path} answered ${res.status}`);
    await until(
      () => /webhook\.test\s+\S*\s+signature ok/.test(out),
      () => out,
    );
  } finally {
    listener.kill('SIGINT');
  }
}

async function until(check, describe, ms = 30_000) {
  const deadline = Date.now() + ms;
  while (!check()) {
    assert.ok(Date.now() < deadline, `timed out; output so far:\n${describe()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
