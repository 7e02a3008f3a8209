import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import S3rver from 's3rver';

/** The credentials a local S3 (s3rver) accepts. */
export const LOCAL_S3_CREDENTIALS = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' } as const;

/** A real S3 on loopback (s3rver), its objects in a temporary directory of its own. */
export interface LocalS3 {
  port: number;
  /** `http://127.0.0.1:<port>`, path-style. */
  endpoint: string;
  /**
   * media-store's settings for a bucket of this S3 (created on first use), at `endpoint` unless given another
   * (a TCP proxy in front of it, say).
   */
  env(bucket: string, endpoint?: string): Record<string, string>;
  /** Stops the server and removes its directory. */
  close(): Promise<void>;
}

/** Starts a local S3 (the suites' real S3: media-store's s3 driver and whoever stores media through it). */
export async function startLocalS3(): Promise<LocalS3> {
  const directory = mkdtempSync(join(tmpdir(), 'tessera-s3-'));
  const server = new S3rver({ port: 0, address: '127.0.0.1', silent: true, directory });
  let port: number;
  try {
    ({ port } = await server.run());
  } catch (err) {
    rmSync(directory, { recursive: true, force: true });
    throw err;
  }
  const endpoint = `http://127.0.0.1:${port}`;
  return {
    port,
    endpoint,
    env: (bucket, at = endpoint) => ({
      MEDIA_STORAGE: 's3',
      S3_ENDPOINT: at,
      S3_BUCKET: bucket,
      S3_ACCESS_KEY_ID: LOCAL_S3_CREDENTIALS.accessKeyId,
      S3_SECRET_ACCESS_KEY: LOCAL_S3_CREDENTIALS.secretAccessKey,
      S3_FORCE_PATH_STYLE: 'true',
    }),
    close: async () => {
      await server.close();
      rmSync(directory, { recursive: true, force: true });
    },
  };
}
