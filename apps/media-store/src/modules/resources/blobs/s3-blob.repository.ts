import {
  CreateBucketCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  S3Client,
  type S3ClientConfig,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import type { Readable } from 'node:stream';
import {
  BlobNotFoundError,
  BlobRepository,
  type ByteRange,
  asStorageError,
  storageUnavailable,
} from './blob.repository';

export interface S3BlobSettings {
  endpoint?: string;
  region: string;
  bucket: string;
  accessKeyId?: string;
  secretAccessKey?: string;
  forcePathStyle: boolean;
  /** Connect and idle-socket timeout (S3_TIMEOUT_MS). */
  timeoutMs: number;
}

const missing = (err: unknown): boolean => {
  const e = err as { name?: string; $metadata?: { httpStatusCode?: number } };
  return e?.name === 'NoSuchKey' || e?.name === 'NotFound' || e?.$metadata?.httpStatusCode === 404;
};

/**
 * S3 (or MinIO) blobs: uploads go up as a multipart upload in 5 MB parts while they stream in (at most two
 * parts in memory); a failed body aborts the multipart upload, so no object and no orphan parts remain.
 */
export class S3BlobRepository extends BlobRepository {
  readonly client: S3Client;
  private bucketReady?: Promise<void>;

  constructor(private readonly settings: S3BlobSettings) {
    super();
    const config: S3ClientConfig = {
      region: settings.region,
      endpoint: settings.endpoint,
      forcePathStyle: settings.forcePathStyle,
      // An idle bound, not a total one: a slow upload that keeps moving is never cut (decision 0493).
      requestHandler: { connectionTimeout: settings.timeoutMs, socketTimeout: settings.timeoutMs },
    };
    if (settings.accessKeyId && settings.secretAccessKey) {
      config.credentials = { accessKeyId: settings.accessKeyId, secretAccessKey: settings.secretAccessKey };
    }
    this.client = new S3Client(config);
  }

  /** Creates the bucket on first use when it does not exist yet (MinIO's setup job normally has). */
  private ensureBucket(): Promise<void> {
    this.bucketReady ??= (async () => {
      const Bucket = this.settings.bucket;
      try {
        await this.client.send(new HeadBucketCommand({ Bucket }));
      } catch (err) {
        if (!missing(err)) throw err;
        await this.client.send(new CreateBucketCommand({ Bucket }));
      }
    })().catch((err) => {
      this.bucketReady = undefined;
      throw asStorageError(err);
    });
    return this.bucketReady;
  }

  async put(key: string, body: Readable, contentType: string): Promise<void> {
    await this.ensureBucket();
    const upload = new Upload({
      client: this.client,
      params: { Bucket: this.settings.bucket, Key: key, Body: body, ContentType: contentType },
      partSize: 5 * 1024 * 1024,
      queueSize: 2,
      leavePartsOnError: false,
    });
    // lib-storage stops reading a failed body without saying so at once: surface the body's error ourselves.
    const failed = new Promise<never>((_, reject) => body.once('error', reject));
    try {
      await Promise.race([upload.done(), failed]);
    } catch (err) {
      if (storageUnavailable(err)) {
        // Storage away: each cleanup call would wait out the same timeouts again, so the caller gets its 503 now.
        // The abort goes on in the background; the caller removes the key (or leaves it to the sweep, 0493).
        void upload.abort().catch(() => undefined);
        throw asStorageError(err);
      }
      await upload.abort().catch(() => undefined);
      await this.remove(key).catch(() => undefined);
      throw err;
    }
  }

  async read(key: string, range?: ByteRange): Promise<Readable> {
    try {
      const out = await this.client.send(
        new GetObjectCommand({
          Bucket: this.settings.bucket,
          Key: key,
          Range: range ? `bytes=${range.start}-${range.end}` : undefined,
        }),
      );
      return out.Body as Readable;
    } catch (err) {
      if (missing(err)) throw new BlobNotFoundError(key);
      throw asStorageError(err);
    }
  }

  async exists(key: string): Promise<boolean> {
    try {
      await this.client.send(new HeadObjectCommand({ Bucket: this.settings.bucket, Key: key }));
      return true;
    } catch (err) {
      if (missing(err)) return false;
      throw asStorageError(err);
    }
  }

  async remove(key: string): Promise<void> {
    await this.client
      .send(new DeleteObjectCommand({ Bucket: this.settings.bucket, Key: key }))
      .catch((err: unknown) => {
        throw asStorageError(err);
      });
  }
}
