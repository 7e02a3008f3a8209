// Server children of the bench: each server runs in its own Node process (never in the load generator's event
// loop), preloaded with cpu-probe.cjs so its CPU time can be read at any moment with process.cpuUsage.
import { fork } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';

export const root = join(dirname(fileURLToPath(import.meta.url)), '../..');
/** require() resolving from a workspace package (apps/x or libs/x), where its dependencies live. */
export const requireFrom = (pkg) => createRequire(join(root, pkg, 'package.json'));
/** The cluster's admin database (pg_stat_statements, settings) and the Redis every bench runs against. */
export const ADMIN_URL = process.env.TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
export const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const probe = join(dirname(fileURLToPath(import.meta.url)), 'cpu-probe.cjs');

/**
 * The product's servers log as deployed: docker-compose.yml and deploy/k8s set LOG_LEVEL=info, and LOG_REQUESTS
 * defaults to true, so every request writes its access line (the bench drains each server's stdout as a log
 * collector would). Figures measured with logging off would flatter the product.
 */
export const DEPLOYED_LOGGING = { LOG_LEVEL: 'info', LOG_REQUESTS: 'true' };

/**
 * Extra node flags for the product's processes (apps/*) only, for a trial: BENCH_NODE_OPTIONS, say
 * `--max-semi-space-size=64` (docs/performance.md, "Tried and not kept"). Unset, they run with node's defaults,
 * as deployed, like the baselines.
 */
export function productNodeArgs() {
  return (process.env.BENCH_NODE_OPTIONS ?? '').split(/\s+/).filter(Boolean);
}

const live = new Set();
let nextId = 0;

/**
 * Starts `script` as a child with `env` and waits until it is ready: `readyUrl` answers 200, or (without it)
 * the child sends {url} over IPC. BENCH_CPU_PROF=<dir> writes a V8 CPU profile of every `profile: true` child
 * (the product's servers).
 */
/**
 * The servers log JSON lines (pino); those at level error or fatal go to the bench's stderr with the server's
 * name, so a non-2xx answer during a run can be traced to its cause. Everything else is dropped.
 */
function forwardErrorLogs(name, stdout) {
  let rest = '';
  stdout.on('data', (d) => {
    const lines = (rest + d).split('\n');
    rest = lines.pop().slice(-100_000);
    for (const line of lines) {
      if (/"level":(50|60)\b/.test(line)) process.stderr.write(`[${name}] ${line.slice(0, 2000)}\n`);
    }
  });
}

export async function startServer(name, script, { env = {}, args = [], readyUrl, profile = false } = {}) {
  const execArgv = ['--require', probe];
  if (/[\\/]apps[\\/]/.test(script)) execArgv.push(...productNodeArgs());
  if (profile && process.env.BENCH_CPU_PROF)
    execArgv.push(
      '--cpu-prof',
      `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`,
      `--cpu-prof-name=${name}-${Date.now()}.cpuprofile`,
    );
  const child = fork(script, args, {
    env: { ...process.env, ...env },
    execArgv,
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  });
  forwardErrorLogs(name, child.stdout);
  let stderr = '';
  child.stderr.on('data', (d) => {
    stderr = (stderr + d).slice(-4000);
  });
  live.add(child);
  child.once('exit', () => live.delete(child));
  const server = {
    name,
    child,
    pid: child.pid,
    url: undefined,
    stderr: () => stderr,
    cpuMs: () => cpuOf(child),
    stop: () => stopChild(child),
  };
  if (readyUrl) {
    for (let i = 0; ; i++) {
      if (child.exitCode !== null) throw new Error(`${name} exited with ${child.exitCode}: ${stderr}`);
      const ok = await fetch(readyUrl).then(
        (r) => r.status === 200,
        () => false,
      );
      if (ok) break;
      if (i > 600) throw new Error(`${name} did not start: ${stderr}`);
      await sleep(100);
    }
    server.url = new URL(readyUrl).origin;
  } else {
    server.url = await new Promise((resolve, reject) => {
      const onMsg = (msg) => {
        if (msg && msg.url) {
          child.off('message', onMsg);
          resolve(msg.url);
        }
      };
      child.on('message', onMsg);
      child.once('exit', (code) => reject(new Error(`${name} exited with ${code}: ${stderr}`)));
    });
  }
  return server;
}

/** The child's CPU time so far (ms), from its own process.cpuUsage() over IPC. */
function cpuOf(child) {
  if (child.exitCode !== null || !child.connected) return Promise.resolve(NaN);
  const id = ++nextId;
  return new Promise((resolve) => {
    const onMsg = (msg) => {
      if (msg && msg.type === 'cpu' && msg.id === id) {
        child.off('message', onMsg);
        resolve(msg.cpuMs);
      }
    };
    child.on('message', onMsg);
    child.send({ type: 'cpu', id });
  });
}

export async function stopChild(child) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  const killed = await Promise.race([exited.then(() => true), sleep(10_000).then(() => false)]);
  if (!killed) {
    child.kill('SIGKILL');
    await exited;
  }
}

/** Stops every child still running (the run's finally). */
export async function stopAll() {
  await Promise.all([...live].map(stopChild));
}

function procStat(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(') ') + 2).split(' ');
    const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
    return { name, cpuMs: (Number(fields[11]) + Number(fields[12])) * 10 }; // USER_HZ = 100
  } catch {
    return undefined;
  }
}

/** CPU time (ms) of one process by pid (Linux /proc), NaN once it is gone. */
export const processCpuMs = (pid) => procStat(pid)?.cpuMs ?? NaN;

/** CPU time (ms) of each Postgres server process on this machine, by pid (Linux /proc; shared with other users). */
function postgresProcesses() {
  const cpu = new Map();
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    const p = procStat(pid);
    if (p?.name === 'postgres') cpu.set(pid, p.cpuMs);
  }
  return cpu;
}

/**
 * Postgres' CPU time from here on: `postgresCpu()` starts a reading, and the function it returns answers the
 * CPU ms every Postgres process spent since, per process, so one that exits in between (a backend whose
 * connection closed, an autovacuum worker) takes its own time away instead of the others'. Its time since the
 * start is lost, so a reading errs low, never negative. NaN where /proc cannot be read.
 */
export function postgresCpu() {
  let before;
  try {
    before = postgresProcesses();
  } catch {
    return () => NaN;
  }
  return () => {
    let total = 0;
    for (const [pid, ms] of postgresProcesses()) total += ms - (before.get(pid) ?? 0);
    return total;
  };
}

/** Peak RSS sampling of a pid (MB). */
export function rssMb(pid) {
  try {
    const line = readFileSync(`/proc/${pid}/status`, 'utf8')
      .split('\n')
      .find((l) => l.startsWith('VmRSS:'));
    return Number(line.split(/\s+/)[1]) / 1024;
  } catch {
    return NaN;
  }
}

/** A free loopback TCP port (for servers that take PORT from the env). */
export async function freePort() {
  const { createServer } = await import('node:net');
  return new Promise((resolve) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}
