import { ListMultipartUploadsCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { LOCAL_S3_CREDENTIALS, type LocalS3, startLocalS3 } from '@tessera/testing';
import { BlobNotFoundError, type BlobRepository } from '../src/modules/resources/blobs/blob.repository';
import { FsBlobRepository } from '../src/modules/resources/blobs/fs-blob.repository';
import { S3BlobRepository } from '../src/modules/resources/blobs/s3-blob.repository';

const read = async (stream: Readable): Promise<Buffer> => {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
};
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

/** A body that sends `bytes` and then fails, as an aborted or refused upload does. */
function failingBody(bytes: Buffer): Readable {
  let sent = false;
  return new Readable({
    read() {
      if (!sent) {
        sent = true;
        this.push(bytes);
      } else this.destroy(new Error('client went away'));
    },
  });
}

interface Driver {
  name: string;
  blobs: () => BlobRepository;
  /** Whatever the driver left behind besides committed blobs (temp files, open multipart uploads). */
  leftovers: () => Promise<string[]>;
  keys: () => Promise<string[]>;
}

/** The same suite for every MEDIA_STORAGE driver. */
function driverSuite(driver: () => Driver) {
  let d: Driver;
  beforeAll(() => {
    d = driver();
  });

  it('stores a streamed body and reads it back whole and by range; exists and remove', async () => {
    const body = randomBytes(300_000);
    await d
      .blobs()
      .put('p1/e1/selfie/a', Readable.from([body.subarray(0, 1000), body.subarray(1000)]), 'image/png');
    expect(await d.blobs().exists('p1/e1/selfie/a')).toBe(true);
    expect((await read(await d.blobs().read('p1/e1/selfie/a'))).equals(body)).toBe(true);
    const part = await read(await d.blobs().read('p1/e1/selfie/a', { start: 10, end: 99 }));
    expect(part.equals(body.subarray(10, 100))).toBe(true);
    await d.blobs().remove('p1/e1/selfie/a');
    expect(await d.blobs().exists('p1/e1/selfie/a')).toBe(false);
    await expect(d.blobs().read('p1/e1/selfie/a')).rejects.toBeInstanceOf(BlobNotFoundError);
  });

  it('streams a body larger than one multipart part (12 MB) intact', async () => {
    const body = randomBytes(12 * 1024 * 1024);
    const chunks = Array.from({ length: 12 }, (_, i) =>
      body.subarray(i * 1024 * 1024, (i + 1) * 1024 * 1024),
    );
    await d.blobs().put('p1/e1/liveness_video/big', Readable.from(chunks), 'video/mp4');
    expect(sha(await read(await d.blobs().read('p1/e1/liveness_video/big')))).toBe(sha(body));
    await d.blobs().remove('p1/e1/liveness_video/big');
  });

  it('a body that fails half-way leaves no blob, no temporary file and no open multipart upload', async () => {
    const before = await d.keys();
    await expect(
      d.blobs().put('p1/e1/selfie/failed', failingBody(randomBytes(64 * 1024)), 'image/png'),
    ).rejects.toThrow('client went away');
    await expect(
      d.blobs().put('p1/e1/selfie/failed-big', failingBody(randomBytes(6 * 1024 * 1024)), 'image/png'),
    ).rejects.toThrow('client went away');
    expect(await d.blobs().exists('p1/e1/selfie/failed')).toBe(false);
    expect(await d.blobs().exists('p1/e1/selfie/failed-big')).toBe(false);
    expect(await d.keys()).toEqual(before);
    expect(await d.leftovers()).toEqual([]);
  });
}

const filesUnder = (root: string): string[] =>
  readdirSync(root, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name));

describe('fs blob driver', () => {
  const root = mkdtempSync(join(tmpdir(), 'tessera-blobs-'));
  const blobs = new FsBlobRepository(root);
  afterAll(() => rmSync(root, { recursive: true, force: true }));
  driverSuite(() => ({
    name: 'fs',
    blobs: () => blobs,
    keys: async () =>
      filesUnder(root)
        .filter((f) => !f.includes('/.tmp/'))
        .sort(),
    leftovers: async () => filesUnder(root).filter((f) => f.includes('/.tmp/')),
  }));

  it('refuses a key that escapes its root', async () => {
    await expect(blobs.put('../outside', Readable.from([Buffer.from('x')]), 'image/png')).rejects.toThrow(
      /Invalid blob key/,
    );
  });
});

describe('s3 blob driver (s3rver)', () => {
  let server: LocalS3;
  let blobs: S3BlobRepository;
  const bucket = 'tessera-media-test';

  beforeAll(async () => {
    server = await startLocalS3();
    // The bucket does not exist yet: the driver creates it on first use.
    blobs = new S3BlobRepository({
      endpoint: server.endpoint,
      region: 'us-east-1',
      bucket,
      ...LOCAL_S3_CREDENTIALS,
      forcePathStyle: true,
      timeoutMs: 10_000,
    });
  });
  afterAll(async () => {
    blobs?.client.destroy();
    await server?.close();
  });

  driverSuite(() => ({
    name: 's3',
    blobs: () => blobs,
    keys: async () => {
      const out = await blobs.client.send(new ListObjectsV2Command({ Bucket: bucket }));
      return (out.Contents ?? []).map((o) => o.Key as string).sort();
    },
    leftovers: async () => {
      const out = await blobs.client
        .send(new ListMultipartUploadsCommand({ Bucket: bucket }))
        .catch(() => ({ Uploads: [] }));
      return (out.Uploads ?? []).map((u) => u.Key as string);
    },
  }));
});
