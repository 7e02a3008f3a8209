import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** The built media-store entry point (`pnpm build` first). */
export const MEDIA_STORE_MAIN = join(__dirname, '../../../apps/media-store/dist/main.js');
export const TEST_INTERNAL_SERVICE_TOKEN = 'test-internal-service-token-0123456789';

export interface MediaStoreProcess {
  child: ChildProcess;
  port: number;
  url: string;
  /** MEDIA_FS_ROOT of this process (a fresh temporary folder unless the env names one). */
  fsRoot: string;
  /** The env an API under test needs to reach it: MEDIA_STORE_URL and INTERNAL_SERVICE_TOKEN. */
  clientEnv: Record<string, string>;
  stop: () => Promise<void>;
}

/** A loopback port that is free right now. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/**
 * Runs the real media-store as a child process on the given test environment (it migrates schema `media`
 * into the same database, as in production), so verification-api under test reaches it over HTTP and RPC.
 */
export async function startMediaStoreProcess(env: Record<string, string>): Promise<MediaStoreProcess> {
  const port = env.PORT && env.PORT !== '0' ? Number(env.PORT) : await freePort();
  const ownRoot = env.MEDIA_FS_ROOT ? undefined : mkdtempSync(join(tmpdir(), 'tessera-media-'));
  const fsRoot = env.MEDIA_FS_ROOT ?? (ownRoot as string);
  const token = env.INTERNAL_SERVICE_TOKEN ?? TEST_INTERNAL_SERVICE_TOKEN;
  const child = spawn(process.execPath, [MEDIA_STORE_MAIN], {
    env: {
      ...process.env,
      ...env,
      PORT: String(port),
      HOST: '127.0.0.1',
      MIGRATE_ON_BOOT: 'true',
      LOG_LEVEL: 'warn',
      LOG_REQUESTS: 'false',
      MEDIA_FS_ROOT: fsRoot,
      INTERNAL_SERVICE_TOKEN: token,
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (d) => (stderr += d));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`media-store exited: ${stderr}`);
    const ok = await fetch(`${url}/health`)
      .then((r) => r.status === 200)
      .catch(() => false);
    if (ok) break;
    if (Date.now() > deadline) throw new Error(`media-store not healthy: ${stderr}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    child,
    port,
    url,
    fsRoot,
    clientEnv: { MEDIA_STORE_URL: url, INTERNAL_SERVICE_TOKEN: token },
    stop: async () => {
      if (child.exitCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGTERM');
        await exited;
      }
      if (ownRoot) rmSync(ownRoot, { recursive: true, force: true });
    },
  };
}

/**
 * Tiny real media committed under libs/testing/fixtures (made with Debian's ffmpeg; the PDF by hand):
 * tiny.jpg, tiny.png, tiny.webp, tiny.pdf, tiny.webm, tiny.mp4.
 */
export const mediaFixture = (name: string): Buffer => readFileSync(join(__dirname, '../fixtures', name));
