import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type ServiceProcess, startServiceProcess } from './service-process';

/** The built media-store entry point (`pnpm build` first). */
export const MEDIA_STORE_MAIN = join(__dirname, '../../../apps/media-store/dist/main.js');
export const TEST_INTERNAL_SERVICE_TOKEN = 'test-internal-service-token-0123456789';
/** The header of a call to media-store's internal API with the test token (what verification-api sends). */
export const INTERNAL_AUTH = { authorization: `Bearer ${TEST_INTERNAL_SERVICE_TOKEN}` };

export interface MediaStoreProcess extends ServiceProcess {
  url: string;
  /** MEDIA_FS_ROOT of this process (a fresh temporary folder unless the env names one). */
  fsRoot: string;
  /** The env an API under test needs to reach it: MEDIA_STORE_URL and INTERNAL_SERVICE_TOKEN. */
  clientEnv: Record<string, string>;
}

/**
 * Runs the real media-store as a child process on the given test environment (it migrates schema `media`
 * into the same database, as in production), so verification-api under test reaches it over HTTP and RPC.
 */
export async function startMediaStoreProcess(env: Record<string, string>): Promise<MediaStoreProcess> {
  const ownRoot = env.MEDIA_FS_ROOT ? undefined : mkdtempSync(join(tmpdir(), 'tessera-media-'));
  const fsRoot = env.MEDIA_FS_ROOT ?? (ownRoot as string);
  const token = env.INTERNAL_SERVICE_TOKEN ?? TEST_INTERNAL_SERVICE_TOKEN;
  const service = await startServiceProcess(
    'media-store',
    MEDIA_STORE_MAIN,
    { ...env, LOG_REQUESTS: 'false', MEDIA_FS_ROOT: fsRoot, INTERNAL_SERVICE_TOKEN: token },
    env.PORT && env.PORT !== '0' ? Number(env.PORT) : undefined,
  );
  const url = `http://127.0.0.1:${service.port}`;
  return {
    ...service,
    url,
    fsRoot,
    clientEnv: { MEDIA_STORE_URL: url, INTERNAL_SERVICE_TOKEN: token },
    stop: async () => {
      await service.stop();
      if (ownRoot) rmSync(ownRoot, { recursive: true, force: true });
    },
  };
}

/**
 * Tiny real media committed under libs/testing/fixtures (made with Debian's ffmpeg; the PDF by hand):
 * tiny.jpg, tiny.png, tiny.webp, tiny.pdf, tiny.webm, tiny.mp4.
 */
export const mediaFixture = (name: string): Buffer => readFileSync(join(__dirname, '../fixtures', name));
