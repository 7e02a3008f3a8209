import { spawn } from 'node:child_process';
import { builtEntryPointsSuite, type ExtraEnv } from './built-entry-points';
import type { SchemaMigrator } from './database';
import { SERVICE_BOOT_TIMEOUT_MS } from './service-process';

/** The line Nest logs once the app listens: the moment the process reports it has started. */
const STARTED = /Nest application successfully started/;

/**
 * When a test stops a booted process, counted from its started line: in the same instant, and a few
 * milliseconds later, when the connections and commands its boot began are still on their way (decision 0465).
 * The same instant comes three times: it is the likeliest to find a command in flight.
 */
export const STOP_OFFSETS_MS = [0, 0, 0, 5, 20, 50];

export interface StoppedProcess {
  /** Milliseconds from the started line to the SIGTERM. */
  offsetMs: number;
  /** The exit code (0 for a clean shutdown), or null when a signal ended the process. */
  code: number | null;
  signal: NodeJS.Signals | null;
  stderr: string;
  /** The JSON log lines at level error or fatal. */
  errorLines: string[];
}

/**
 * Runs a built entry point (`node <main>`, as operators run it) with exactly `env` (and PATH), sends it SIGTERM
 * `offsetMs` after its started line, and reports how it ended. Throws when it exits before starting (with its
 * stderr) or does not start within `bootTimeoutMs`; it is SIGKILLed 30 s after the SIGTERM.
 */
export function stopAfterBoot(
  main: string,
  env: Record<string, string>,
  offsetMs: number,
  bootTimeoutMs = SERVICE_BOOT_TIMEOUT_MS,
): Promise<StoppedProcess> {
  const child = spawn(process.execPath, [main], {
    env: { PATH: process.env.PATH, ...env, LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  let started = false;
  const bootTimer = setTimeout(() => child.kill('SIGKILL'), bootTimeoutMs);
  child.stdout!.on('data', (c: Buffer) => {
    stdout += c.toString('utf8');
    if (started || !STARTED.test(stdout)) return;
    started = true;
    clearTimeout(bootTimer);
    // Offset 0 is the same instant: no timer between the line and the signal.
    if (offsetMs === 0) child.kill('SIGTERM');
    else setTimeout(() => child.kill('SIGTERM'), offsetMs);
    setTimeout(() => child.kill('SIGKILL'), offsetMs + 30_000).unref();
  });
  child.stderr!.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
  return new Promise((resolve, reject) => {
    child.on('exit', (code, signal) => {
      clearTimeout(bootTimer);
      if (!started) {
        reject(new Error(`${main} did not start (code ${code}, signal ${signal}): ${stderr}`));
        return;
      }
      const errorLines = stdout.split('\n').filter((l) => ['error', 'fatal'].includes(levelOf(l) ?? ''));
      resolve({ offsetMs, code, signal, stderr, errorLines });
    });
  });
}

function levelOf(line: string): string | undefined {
  try {
    return (JSON.parse(line) as { level?: string }).level;
  } catch {
    return undefined;
  }
}

/**
 * Boots `main` once per offset of STOP_OFFSETS_MS and stops it right after its started line. Every run must
 * end as a clean shutdown does: exit code 0, nothing on stderr, no error line. Returns the runs that did not
 * (the test expects none), each with what it printed.
 */
export async function uncleanStopsAfterBoot(
  main: string,
  env: Record<string, string>,
  offsets: number[] = STOP_OFFSETS_MS,
): Promise<StoppedProcess[]> {
  const unclean: StoppedProcess[] = [];
  for (const offsetMs of offsets) {
    const run = await stopAfterBoot(main, env, offsetMs);
    if (run.code !== 0 || run.signal !== null || run.stderr !== '' || run.errorLines.length > 0)
      unclean.push(run);
  }
  return unclean;
}

/**
 * The shutdown suite of a service (decision 0465): each built entry point (`roles`: role name → dist file, as
 * operators run it) is booted on the suite's own database and Redis namespace, and stopped by SIGTERM in the
 * instant it reports started and a few milliseconds later (STOP_OFFSETS_MS). Every run must exit 0 with nothing
 * on stderr and no error line. `extraEnv` adds what the service needs beyond the environment (and cleans up).
 */
export function describeShutdownAfterBoot(
  service: string,
  migrator: SchemaMigrator,
  roles: Record<string, string>,
  extraEnv: ExtraEnv = {},
): void {
  describe(`${service} stopped right after it reports started`, () => {
    const envFor = builtEntryPointsSuite(service, migrator, roles, extraEnv);

    it.each(Object.entries(roles))(
      'the %s shuts down cleanly: exit 0, nothing on stderr, no error line',
      async (_role, entry) => {
        expect(await uncleanStopsAfterBoot(entry, envFor({ WORKER_PORT: '0' }))).toEqual([]);
      },
      120_000,
    );
  });
}
