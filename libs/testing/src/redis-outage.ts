import { spawn, type ChildProcess } from 'node:child_process';
import { builtEntryPointsSuite, type ExtraEnv } from './built-entry-points';
import type { SchemaMigrator } from './database';
import { TEST_REDIS_URL } from './redis';
import { freePort, SERVICE_BOOT_TIMEOUT_MS } from './service-process';
import { startSilentServer, startTcpProxy } from './tcp-proxy';

/** What a built process printed and how it ended. */
export interface EndedProcess {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** The JSON log lines at level error or fatal. */
  errorLines: string[];
}

/** The shutdown bound the outage suite gives its processes: a shutdown that waits for Redis runs into it. */
const SHUTDOWN_TIMEOUT_MS = 10_000;

/**
 * A process that cannot reach Redis at boot must have given up by then. Its check waits 3 s (BOOT_WAIT_MS), but
 * loading the built app comes first and took up to 14.7 s on a loaded 2-core machine; one that hangs (as before
 * decisions 0470 and 0478) never exits, so the bound only has to be finite.
 */
const BOOT_GIVE_UP_MS = 30_000;

/**
 * How long Redis stays away before the SIGTERM: longer than Nest's Redis transport used to keep reconnecting (10
 * attempts 500 ms apart), after which its connections had ended and their QUIT failed the shutdown.
 */
const OUTAGE_BEFORE_STOP_MS = 6_000;
/** How long the process may take to report the outage on /health (503) before the test gives up on it. */
const NOTICE_OUTAGE_WITHIN_MS = 30_000;

/** A shutdown while Redis is away must end well inside SHUTDOWN_TIMEOUT_MS (it waited all of it before 0470). */
export const OUTAGE_SHUTDOWN_MAX_MS = 5_000;

function levelOf(line: string): string | undefined {
  try {
    return (JSON.parse(line) as { level?: string }).level;
  } catch {
    return undefined;
  }
}

function run(
  main: string,
  env: Record<string, string>,
): { child: ChildProcess; ended: Promise<EndedProcess> } {
  const child = spawn(process.execPath, [main], {
    env: {
      PATH: process.env.PATH,
      ...env,
      LOG_LEVEL: 'info',
      SHUTDOWN_TIMEOUT_MS: String(SHUTDOWN_TIMEOUT_MS),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
  child.stderr!.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
  const ended = new Promise<EndedProcess>((resolve) =>
    child.on('exit', (code, signal) =>
      resolve({
        code,
        signal,
        stdout,
        stderr,
        errorLines: stdout.split('\n').filter((l) => ['error', 'fatal'].includes(levelOf(l) ?? '')),
      }),
    ),
  );
  return { child, ended };
}

/** One /health answer: its status (0 when none came) and its Retry-After, if any. */
interface HealthAnswer {
  status: number;
  retryAfter: string | null;
}

async function healthAnswer(port: number): Promise<HealthAnswer> {
  return fetch(`http://127.0.0.1:${port}/health`, { signal: AbortSignal.timeout(3000) })
    .then((r) => ({ status: r.status, retryAfter: r.headers.get('retry-after') }))
    .catch(() => ({ status: 0, retryAfter: null }));
}

/** The first /health answer with `status` within `withinMs`, or undefined. */
async function waitForHealth(
  port: number,
  status: number,
  withinMs: number,
): Promise<HealthAnswer | undefined> {
  const deadline = Date.now() + withinMs;
  while (Date.now() < deadline) {
    const answer = await healthAnswer(port);
    if (answer.status === status) return answer;
    await new Promise((r) => setTimeout(r, 100));
  }
  return undefined;
}

/**
 * Starts `main` with REDIS_URL on a loopback port where nothing listens (a password in the URL), or with `hung`
 * on one that accepts connections and never answers (decision 0478), and reports how it ended; it is SIGKILLed
 * after BOOT_GIVE_UP_MS (code null) when it neither starts nor exits.
 */
export async function bootWithoutRedis(
  main: string,
  env: Record<string, string>,
  hung = false,
): Promise<EndedProcess & { elapsedMs: number; password: string }> {
  const password = 'boot-check-secret';
  const silent = hung ? await startSilentServer() : undefined;
  const redisUrl = `redis://:${password}@127.0.0.1:${silent?.port ?? (await freePort())}`;
  const started = Date.now();
  const { child, ended } = run(main, { ...env, REDIS_URL: redisUrl });
  const timer = setTimeout(() => child.kill('SIGKILL'), BOOT_GIVE_UP_MS);
  const result = await ended;
  clearTimeout(timer);
  await silent?.close();
  return { ...result, elapsedMs: Date.now() - started, password };
}

/**
 * Starts `main` with DATABASE_URL on a loopback port where nothing listens (a password in the URL), and reports how
 * it ended, as bootWithoutRedis does.
 */
export async function bootWithoutPostgres(
  main: string,
  env: Record<string, string>,
): Promise<EndedProcess & { elapsedMs: number; password: string }> {
  const password = 'boot-check-secret';
  const databaseUrl = `postgres://postgres:${password}@127.0.0.1:${await freePort()}/tessera`;
  const started = Date.now();
  const { child, ended } = run(main, { ...env, DATABASE_URL: databaseUrl });
  const timer = setTimeout(() => child.kill('SIGKILL'), BOOT_GIVE_UP_MS);
  const result = await ended;
  clearTimeout(timer);
  return { ...result, elapsedMs: Date.now() - started, password };
}

/** How Redis goes away in stopDuringRedisOutage: cut (connections closed, new ones refused) or hung (decision 0478). */
export type RedisOutage = 'cut' | 'hung';

/**
 * Starts `main` against the real Redis behind a TCP proxy, waits for its /health to answer 200, then cuts the
 * proxy, or holds it (`hung`: connections stay open and new ones are accepted, but nothing reaches Redis, so
 * nothing is answered), waits for /health to answer 503 (the process has noticed) and OUTAGE_BEFORE_STOP_MS in
 * all, then sends SIGTERM and reports how long it took to exit. It is SIGKILLed 30 s after the SIGTERM.
 */
export async function stopDuringRedisOutage(
  main: string,
  env: Record<string, string>,
  outage: RedisOutage = 'cut',
): Promise<EndedProcess & { shutdownMs: number; reportedDown: boolean; downRetryAfter: string | null }> {
  const proxy = await startTcpProxy('127.0.0.1', Number(new URL(TEST_REDIS_URL).port || 6379));
  const port = await freePort();
  const { child, ended } = run(main, {
    ...env,
    REDIS_URL: proxy.url('redis'),
    PORT: String(port),
    WORKER_PORT: String(port),
  });
  try {
    if (!(await waitForHealth(port, 200, SERVICE_BOOT_TIMEOUT_MS))) {
      child.kill('SIGKILL');
      const early = await ended;
      throw new Error(`${main} did not become healthy: ${early.stderr}`);
    }
    if (outage === 'cut') proxy.cut();
    else proxy.hold();
    const cutAt = Date.now();
    // Idle, the 503 comes within about a second; a CI run with a browser suite beside it once took more than 10 s.
    const down = await waitForHealth(port, 503, NOTICE_OUTAGE_WITHIN_MS);
    await new Promise((r) => setTimeout(r, Math.max(0, cutAt + OUTAGE_BEFORE_STOP_MS - Date.now())));
    const stopped = Date.now();
    child.kill('SIGTERM');
    const killer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    const result = await ended;
    clearTimeout(killer);
    return {
      ...result,
      shutdownMs: Date.now() - stopped,
      reportedDown: down !== undefined,
      downRetryAfter: down?.retryAfter ?? null,
    };
  } finally {
    await proxy.close();
  }
}

/**
 * The most `Reconnecting to Redis...` lines one outage may give: one per connection of the RPC transport (a
 * server's two, a client's two), since they are throttled to one per 10 s (decision 0478). Nest's transport wrote
 * one per attempt, about ten per connection in OUTAGE_BEFORE_STOP_MS.
 */
const RECONNECT_LINES_MAX = 4;

/**
 * The Redis-outage suite of a service (decision 0470), for each built entry point (`roles`: role name → dist
 * file): started while Redis (or Postgres) is unreachable, it exits 1 within seconds with one line on stderr naming
 * the dependency's address (not its password); stopped while Redis is unreachable, it exits 0 well inside SHUTDOWN_TIMEOUT_MS, with
 * nothing on stderr and no error line about the shutdown.
 */
export function describeRedisOutage(
  service: string,
  migrator: SchemaMigrator,
  roles: Record<string, string>,
  extraEnv: ExtraEnv = {},
): void {
  describe(`${service} while Redis or Postgres is unreachable`, () => {
    const envFor = builtEntryPointsSuite(service, migrator, roles, extraEnv);

    it.each(
      Object.entries(roles).flatMap(([role, entry]) => [
        [role, 'where nothing listens', entry, false] as const,
        [role, 'that accepts connections and never answers', entry, true] as const,
      ]),
    )(
      'the %s started with Redis at a port %s exits 1 with one line naming Redis',
      async (_role, _where, entry, hung) => {
        const boot = await bootWithoutRedis(entry, envFor({ WORKER_PORT: '0' }), hung);
        expect({ code: boot.code, signal: boot.signal }).toEqual({ code: 1, signal: null });
        expect(boot.elapsedMs).toBeLessThan(BOOT_GIVE_UP_MS);
        expect(boot.stderr.trimEnd().split('\n')).toEqual([
          expect.stringMatching(
            /^Boot failed: Redis at redis:\/\/127\.0\.0\.1:\d+ did not answer within 3 s \(/,
          ),
        ]);
        expect(boot.stderr + boot.stdout).not.toContain(boot.password);
        expect(boot.errorLines).toEqual([]);
      },
      60_000,
    );

    it.each(Object.entries(roles))(
      'the %s started without Postgres exits 1 with one line naming Postgres',
      async (_role, entry) => {
        const boot = await bootWithoutPostgres(entry, envFor({ WORKER_PORT: '0' }));
        expect({ code: boot.code, signal: boot.signal }).toEqual({ code: 1, signal: null });
        expect(boot.elapsedMs).toBeLessThan(BOOT_GIVE_UP_MS);
        expect(boot.stderr.trimEnd().split('\n')).toEqual([
          expect.stringMatching(
            /^Boot failed: Postgres at postgres:\/\/127\.0\.0\.1:\d+\/tessera did not answer within 3 s \(.*check DATABASE_URL/,
          ),
        ]);
        expect(boot.stderr + boot.stdout).not.toContain(boot.password);
        expect(boot.errorLines).toEqual([]);
      },
      60_000,
    );

    it.each(
      Object.entries(roles).flatMap(([role, entry]) => [
        [role, 'cut' as const, entry] as const,
        [role, 'hung' as const, entry] as const,
      ]),
    )(
      'the %s stopped while Redis is %s exits 0 promptly',
      async (_role, outage, entry) => {
        const stop = await stopDuringRedisOutage(entry, envFor(), outage);
        expect(stop.reportedDown).toBe(true);
        // Like every other 503, /health's tells a client when to look again (decision 0488).
        expect(stop.downRetryAfter).toBe('1');
        expect({ code: stop.code, signal: stop.signal, stderr: stop.stderr }).toEqual({
          code: 0,
          signal: null,
          stderr: '',
        });
        expect(stop.errorLines.filter((l) => /shutdown/i.test(l))).toEqual([]);
        expect(stop.shutdownMs).toBeLessThan(OUTAGE_SHUTDOWN_MAX_MS);
        const reconnects = stop.stdout.split('\n').filter((l) => l.includes('Reconnecting to Redis'));
        expect(reconnects.length).toBeLessThanOrEqual(RECONNECT_LINES_MAX);
      },
      120_000,
    );
  });
}
