import { execFileSync } from 'node:child_process';
import { Agent, get as httpGet } from 'node:http';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import {
  createTestEnvironment,
  mediaFixture,
  type MediaStoreProcess,
  migratorFor,
  startMediaStoreProcess,
  TEST_INTERNAL_SERVICE_TOKEN,
  type TestEnvironment,
  INTERNAL_AUTH,
} from '@tessera/testing';
import { Client } from 'pg';
import request from 'supertest';
import { databaseOptions } from '../src/database/database';

// The `fs` driver (the default) when its disk refuses (decision 0494): a write the disk refuses (full, over a
// quota or a file-size limit, read-only, an I/O error) answers 503 `Retry-After: 1` in the error shape, like S3
// away (0493), not a 500, and leaves no half-written file; a MEDIA_FS_ROOT the service cannot write stops the
// boot with one line naming it. The built media-store as a process; the disk's refusal is real: the process's
// own file-size limit (RLIMIT_FSIZE, set on the running process with util-linux `prlimit`) makes every write
// past it fail with EFBIG, as a full disk fails one with ENOSPC; a descriptor limit of 0 (RLIMIT_NOFILE) makes
// every open fail with EMFILE.

const JPEG = mediaFixture('tiny.jpg');

let env: TestEnvironment;
let db: Client;
const roots: string[] = [];
const newRoot = () => {
  const root = mkdtempSync(join(tmpdir(), 'tessera-media-disk-'));
  roots.push(root);
  return root;
};

beforeAll(async () => {
  env = await createTestEnvironment([
    migratorFor(databaseOptions, join(__dirname, '../src/database/migrations')),
  ]);
  db = new Client({ connectionString: env.db.url });
  await db.connect();
}, 60_000);
afterAll(async () => {
  await db?.end();
  await env?.teardown();
  for (const root of roots) rmSync(root, { recursive: true, force: true });
});

describe('the disk refuses a write', () => {
  let media: MediaStoreProcess;
  const enrollmentId = randomUUID();
  const owner = `productId=${randomUUID()}&applicantId=${randomUUID()}`;
  /** The running process's soft file-size limit in bytes, or `unlimited`. */
  const limitFileSize = (soft: string) =>
    execFileSync('prlimit', [`--pid=${media.child.pid}`, `--fsize=${soft}:unlimited`]);
  const put = () =>
    request(media.url)
      .put(`/internal/v1/resources/${enrollmentId}/selfie?${owner}`)
      .set(INTERNAL_AUTH)
      .set('content-type', 'application/octet-stream')
      .send(JPEG)
      .timeout(20_000);
  const rows = async () => Number((await db.query('SELECT count(*) AS n FROM media.resources')).rows[0].n);

  beforeAll(async () => {
    media = await startMediaStoreProcess({
      ...env.env,
      INTERNAL_SERVICE_TOKEN: TEST_INTERNAL_SERVICE_TOKEN,
      MEDIA_FS_ROOT: newRoot(),
    });
  }, 60_000);
  afterAll(async () => {
    await media?.stop();
  });

  it('an upload answers 503 Retry-After: 1, records nothing and leaves no partial file', async () => {
    await put().expect(201);
    const before = await rows();
    limitFileSize(String(JPEG.length - 100));
    try {
      const res = await put();
      expect({ status: res.status, retryAfter: res.headers['retry-after'], body: res.body }).toEqual({
        status: 503,
        retryAfter: '1',
        body: { message: 'Media storage temporarily unavailable; retry with back-off' },
      });
    } finally {
      limitFileSize('unlimited');
    }
    expect(await rows()).toBe(before);
    expect(readdirSync(join(media.fsRoot, '.tmp'))).toEqual([]);
  }, 30_000);

  it('a download whose file cannot be opened (out of file descriptors) answers 503, then works again', async () => {
    const { seq } = (await put().expect(201)).body as { seq: number };
    // One kept-alive connection, and a pooled database connection, opened before the limit.
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const download = () =>
      new Promise<{ status: number; retryAfter?: string; body: string }>((resolve, reject) => {
        httpGet(
          `${media.url}/internal/v1/resources/${enrollmentId}/selfie/${seq}?${owner}`,
          { agent, headers: INTERNAL_AUTH },
          (res) => {
            let body = '';
            res.setEncoding('latin1').on('data', (d: string) => (body += d));
            res.on('end', () =>
              resolve({ status: res.statusCode ?? 0, retryAfter: res.headers['retry-after'], body }),
            );
          },
        ).on('error', reject);
      });
    try {
      expect((await download()).status).toBe(200);
      // A limit of no descriptors at all: every open() fails with EMFILE, whichever descriptors are free (the
      // lowest free one raced with descriptors the process closed meanwhile). The connection and the pooled
      // database connection are open already.
      const soft = execFileSync('prlimit', [
        `--pid=${media.child.pid}`,
        '--nofile',
        '-o',
        'SOFT',
        '--noheadings',
      ])
        .toString()
        .trim();
      execFileSync('prlimit', [`--pid=${media.child.pid}`, '--nofile=0:']);
      let refused;
      try {
        refused = await download();
      } finally {
        execFileSync('prlimit', [`--pid=${media.child.pid}`, `--nofile=${soft}:`]);
      }
      expect(refused).toEqual({
        status: 503,
        retryAfter: '1',
        body: JSON.stringify({ message: 'Media storage temporarily unavailable; retry with back-off' }),
      });
      const again = await download();
      expect(again.status).toBe(200);
      expect(Buffer.from(again.body, 'latin1').equals(JPEG)).toBe(true);
    } finally {
      agent.destroy();
    }
  }, 30_000);

  it('once the disk takes writes again, uploads work', async () => {
    const res = await put().expect(201);
    const body = (
      await request(media.url)
        .get(`/internal/v1/resources/${enrollmentId}/selfie/${res.body.seq}?${owner}`)
        .set(INTERNAL_AUTH)
        .expect(200)
    ).body as Buffer;
    expect(Buffer.from(body).equals(JPEG)).toBe(true);
  }, 30_000);
});

describe('a MEDIA_FS_ROOT the service cannot write', () => {
  it('stops the boot with one line naming MEDIA_FS_ROOT and the reason', async () => {
    const file = join(newRoot(), 'not-a-directory');
    writeFileSync(file, 'x');
    const boot = startMediaStoreProcess({
      ...env.env,
      INTERNAL_SERVICE_TOKEN: TEST_INTERNAL_SERVICE_TOKEN,
      MEDIA_FS_ROOT: join(file, 'media'),
    });
    await expect(boot).rejects.toThrow(
      /media-store exited: Boot failed: MEDIA_FS_ROOT .*not-a-directory\/media is not a writable directory \(ENOTDIR\)/,
    );
  }, 60_000);
});
