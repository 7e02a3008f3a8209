import type { Env } from '../../../config/env';
import type { BlobRepository } from './blob.repository';
import { FsBlobRepository } from './fs-blob.repository';
import { S3BlobRepository } from './s3-blob.repository';

/** The blob driver MEDIA_STORAGE names (decision 0110). */
export function blobRepositoryFor(env: Env): BlobRepository {
  if (env.MEDIA_STORAGE === 'fs') return new FsBlobRepository(env.MEDIA_FS_ROOT);
  return new S3BlobRepository({
    endpoint: env.S3_ENDPOINT,
    region: env.S3_REGION,
    bucket: env.S3_BUCKET,
    accessKeyId: env.S3_ACCESS_KEY_ID,
    secretAccessKey: env.S3_SECRET_ACCESS_KEY,
    forcePathStyle: env.S3_FORCE_PATH_STYLE,
    timeoutMs: env.S3_TIMEOUT_MS,
  });
}
