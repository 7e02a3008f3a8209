#!/usr/bin/env node
// Host mode: runs the whole system without Docker. Makes sure Postgres and Redis are up (the same
// bootstrap as the test command), builds, migrates, starts every app and both workers with logs
// prefixed by service, prints each URL once healthy, and stops everything cleanly on Ctrl-C (SIGINT/SIGTERM).
//
//   pnpm start                 build, migrate, run
//   pnpm start -- --no-build   skip the build (dist/ must exist)
//   pnpm start -- --chain evm  also run a local Hardhat node (port 8545, i.e. TESSERA_PORT_BASE + 5545) with
//                              the USDT stand-in deployed, and point the custody worker's `evm` chain at it
//                              (live keys' ETH and USDT; 2 confirmations; docs/decisions/0213)
//   TESSERA_PORT_BASE=4000     ports 4001–4004, 4011 and 4012 instead of 3001–3004, 3011 and 3012, and its own
//                              database (tessera_4000) and queue prefix (tessera-4000)
// Secrets and the operator token live in `.env` (generated on first run; scripts/lib/host-env.mjs).
import { spawn, spawnSync } from 'node:child_process';
import { realpathSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { hostEnv, localTls } from './lib/host-env.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const argv = process.argv.slice(2);
const args = new Set(argv);
const chainArg = argv.includes('--chain') ? argv[argv.indexOf('--chain') + 1] : 'sim';
if (!['sim', 'evm'].includes(chainArg)) {
  process.stderr.write(`--chain must be sim or evm, not ${chainArg}\n`);
  process.exit(2);
}
const say = (line) => process.stdout.write(`[tessera] ${line}\n`);

// Database, Redis prefix and secrets of this checkout (scripts/lib/host-env.mjs): `.env`, written on first run.
const host = hostEnv(root);
const base = host.base;
if (host.created)
  say(`wrote ${host.envFile} with generated secrets (ADMIN_TOKEN and others); delete it for new ones`);
const shared = { ...host.env, HOST: '127.0.0.1' };

const services = [
  {
    name: 'verification-api',
    entry: 'apps/verification-api/dist/main.js',
    port: base + 1,
    env: { PUBLIC_BASE_URL: `http://localhost:${base + 1}` },
  },
  {
    name: 'verification-worker',
    entry: 'apps/verification-api/dist/worker.js',
    port: base + 11,
    portVar: 'WORKER_PORT',
    env: { PUBLIC_BASE_URL: `http://localhost:${base + 1}` },
  },
  { name: 'custody-api', entry: 'apps/custody-api/dist/main.js', port: base + 2 },
  {
    name: 'custody-worker',
    entry: 'apps/custody-api/dist/worker.js',
    port: base + 12,
    portVar: 'WORKER_PORT',
    env: {},
  },
  {
    name: 'webhook-dispatcher',
    entry: 'apps/webhook-dispatcher/dist/main.js',
    port: base + 3,
    // Host mode only: deliveries may reach `pnpm webhooks:listen` on loopback, over its local certificate.
    env: { WEBHOOK_ALLOW_PRIVATE_TARGETS: '127.0.0.1/32,::1/128', WEBHOOK_CA_FILE: localTls(root).certFile },
  },
  {
    name: 'media-store',
    entry: 'apps/media-store/dist/main.js',
    port: base + 4,
    // Local disk by default; MEDIA_STORAGE=s3 with the S3_* settings in your shell switches to S3 or MinIO.
    env: {
      MEDIA_STORAGE: process.env.MEDIA_STORAGE ?? 'fs',
      MEDIA_FS_ROOT: process.env.MEDIA_FS_ROOT ?? join(root, '.tessera/media'),
    },
  },
];
for (const s of services)
  if (s.name.startsWith('verification-')) s.env.MEDIA_STORE_URL = `http://127.0.0.1:${base + 4}`;

function run(command, commandArgs, extraEnv = {}) {
  const result = spawnSync(command, commandArgs, {
    cwd: root,
    stdio: 'inherit',
    env: { ...process.env, ...extraEnv },
  });
  if (result.status !== 0) {
    say(`${command} ${commandArgs.join(' ')} failed`);
    process.exit(result.status ?? 1);
  }
}

say('checking Postgres and Redis');
run('bash', ['scripts/lib/services.sh', 'all']);
if (!args.has('--no-build')) {
  say('building');
  run('pnpm', ['build']);
}
say('migrating');
run('bash', ['scripts/lib/services.sh', 'database', shared.DATABASE_URL]);
run('pnpm', ['db:migrate'], shared);

const children = new Map();
let stopping = false;
let exitCode = 0;

if (chainArg === 'evm') {
  const port = base + 5545;
  const rpcUrl = `http://127.0.0.1:${port}`;
  say(`starting a Hardhat node on ${rpcUrl}`);
  // The node itself is the child (not npx), so stopping it stops the chain.
  const hardhat = spawn(
    process.execPath,
    [
      realpathSync(join(root, 'apps/custody-api/node_modules/hardhat/internal/cli/cli.js')),
      'node',
      '--config',
      join(root, 'deploy/hardhat/hardhat.config.js'),
      '--hostname',
      '127.0.0.1',
      '--port',
      String(port),
    ],
    // Hardhat insists on being resolvable from its working directory: custody-api holds the dev dependency.
    { cwd: join(root, 'apps/custody-api'), stdio: ['ignore', 'ignore', 'pipe'] },
  );
  children.set('hardhat', hardhat);
  prefixLines(hardhat.stderr.setEncoding('utf8'), 'hardhat', process.stderr);
  hardhat.on('exit', (code, signal) => {
    children.delete('hardhat');
    if (!stopping) {
      say(`hardhat exited (${signal ?? code}); stopping everything`);
      stop(1);
    }
  });
  const { deployUsdt } = await import('../deploy/hardhat/deploy-usdt.mjs');
  let usdt;
  for (let i = 0; !usdt; i++) {
    try {
      usdt = await deployUsdt(rpcUrl);
    } catch (err) {
      if (i > 240) {
        say(`Hardhat did not come up: ${err.message}`);
        stop(1);
        await new Promise(() => {});
      }
      await new Promise((r) => setTimeout(r, 250));
    }
  }
  say(`USDT stand-in deployed at ${usdt}`);
  // The worker watches the chain; the API reads it for on-demand reconciliation (decision 0226) and asks it whether
  // a withdrawal it is asked to cancel may already be on it (decision 0453).
  for (const name of ['custody-worker', 'custody-api']) {
    const service = services.find((s) => s.name === name);
    service.env = {
      ...service.env,
      CHAIN_EVM_RPC_URL: rpcUrl,
      CHAIN_EVM_CHAIN_ID: '31337',
      CHAIN_EVM_USDT_CONTRACT: usdt,
      CHAIN_EVM_CONFIRMATIONS: '2',
    };
  }
}

function prefixLines(stream, name, out) {
  let buffer = '';
  stream.on('data', (chunk) => {
    buffer += chunk;
    const lines = buffer.split('\n');
    buffer = lines.pop();
    for (const line of lines) out.write(`[${name}] ${line}\n`);
  });
  stream.on('end', () => buffer && out.write(`[${name}] ${buffer}\n`));
}

for (const service of services) {
  const env = { ...process.env, ...shared, ...service.env, PORT: String(service.port) };
  if (service.portVar) env[service.portVar] = String(service.port);
  const child = spawn(process.execPath, ['--enable-source-maps', service.entry], {
    cwd: root,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.set(service.name, child);
  prefixLines(child.stdout.setEncoding('utf8'), service.name, process.stdout);
  prefixLines(child.stderr.setEncoding('utf8'), service.name, process.stderr);
  child.on('exit', (code, signal) => {
    children.delete(service.name);
    if (!stopping) {
      say(`${service.name} exited (${signal ?? code}); stopping everything`);
      stop(1);
    } else if (children.size === 0) {
      say('all services stopped');
      process.exit(exitCode);
    }
  });
}

async function healthy(service) {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline && !stopping) {
    try {
      const res = await fetch(`http://127.0.0.1:${service.port}/health`);
      if (res.status === 200) return true;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  return false;
}

function stop(code = 0) {
  if (stopping) return;
  stopping = true;
  exitCode = code;
  say('stopping: SIGTERM to every service');
  for (const child of children.values()) child.kill('SIGTERM');
  setTimeout(() => {
    for (const child of children.values()) child.kill('SIGKILL');
    process.exit(code || 1);
  }, 15_000).unref();
  if (children.size === 0) process.exit(code);
}

process.on('SIGINT', () => stop(0));
process.on('SIGTERM', () => stop(0));

const results = await Promise.all(services.map(healthy));
if (stopping) await new Promise(() => {});
if (results.every(Boolean)) {
  say('all services healthy:');
  for (const s of services)
    say(`  ${s.name.padEnd(20)} http://localhost:${s.port}  (health: /health, metrics: /metrics)`);
  say(`operator token: ADMIN_TOKEN in ${host.envFile}; demo product, keys and a funded wallet: pnpm seed`);
  if (base !== 3000) {
    say(
      `CLIs for this instance: DATABASE_URL=${shared.DATABASE_URL} QUEUE_PREFIX=${shared.QUEUE_PREFIX} pnpm --filter <app> cli …`,
    );
  }
  say('press Ctrl-C to stop');
} else {
  say(
    `not healthy in time: ${services
      .filter((_, i) => !results[i])
      .map((s) => s.name)
      .join(', ')}`,
  );
  stop(1);
}
