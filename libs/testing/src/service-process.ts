import { type ChildProcess, spawn } from 'node:child_process';
import { createServer } from 'node:net';

/** A loopback port that is free right now. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/**
 * How long a child app may take to answer /health. Generous: CI runs two packages' suites at once on two shared
 * cores, where a media-store boot that takes 4 s alone took 18 s (and more when a browser suite ran beside it).
 */
export const SERVICE_BOOT_TIMEOUT_MS = 90_000;

/**
 * The Jest timeout of a hook that boots an app in process and a child app (`startServiceProcess` and the
 * starters built on it). Above `SERVICE_BOOT_TIMEOUT_MS`, so a slow or failed boot reports the child's own
 * error (with its stderr) instead of Jest's bare "Exceeded timeout of 30000 ms for a hook".
 */
export const SETUP_HOOK_TIMEOUT_MS = 150_000;

/** One /health probe: a connection that answers nothing must not hold the loop past its deadline. */
const PROBE_TIMEOUT_MS = 5_000;

export interface ServiceProcess {
  child: ChildProcess;
  port: number;
  /** SIGTERM, then waits for the exit (a no-op once it has exited or was killed). */
  stop: () => Promise<void>;
}

/**
 * Runs a built app (`node <main>`) as a child process on loopback with the given env, migrating its own schema
 * at boot as in production, and resolves once its /health answers 200 (`bootTimeoutMs`, SERVICE_BOOT_TIMEOUT_MS
 * by default; its stderr is in the error, and the child is killed).
 */
export async function startServiceProcess(
  name: string,
  main: string,
  env: Record<string, string>,
  port?: number,
  bootTimeoutMs = SERVICE_BOOT_TIMEOUT_MS,
): Promise<ServiceProcess> {
  const listenPort = port ?? (await freePort());
  const child = spawn(process.execPath, [main], {
    env: {
      ...process.env,
      ...env,
      MIGRATE_ON_BOOT: 'true',
      LOG_LEVEL: 'warn',
      PORT: String(listenPort),
      HOST: '127.0.0.1',
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (d) => (stderr += d));
  const deadline = Date.now() + bootTimeoutMs;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${name} exited: ${stderr}`);
    const ok = await fetch(`http://127.0.0.1:${listenPort}/health`, {
      signal: AbortSignal.timeout(PROBE_TIMEOUT_MS),
    })
      .then((r) => r.status === 200)
      .catch(() => false);
    if (ok) break;
    if (Date.now() > deadline) {
      // Never leave a half-started child behind.
      child.kill('SIGKILL');
      throw new Error(`${name} not healthy after ${bootTimeoutMs} ms: ${stderr}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    child,
    port: listenPort,
    stop: async () => {
      // Exited already: on its own (an exit code) or killed (a signal; exitCode stays null).
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    },
  };
}
