import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import {
  createTestEnvironment,
  INTERNAL_AUTH,
  type LocalS3,
  mediaFixture,
  type MediaStoreProcess,
  migratorFor,
  startLocalS3,
  startMediaStoreProcess,
  startTcpProxy,
  type TcpProxy,
  TEST_INTERNAL_SERVICE_TOKEN,
  type TestEnvironment,
} from '@tessera/testing';
import { Client } from 'pg';
import request from 'supertest';
import { databaseOptions } from '../src/database/database';

// Storage away while media-store runs (decision 0493): S3 cut (connections refused) or hung (connections accepted,
// nothing answered). Each call answers 503 `Retry-After: 1` in the error shape within a bound, never a 500 or a
// hang, and nothing is half-written. The built media-store as a process, a real S3 (s3rver) behind a TCP proxy.

const JPEG = mediaFixture('tiny.jpg');
/** The suite's S3 timeouts (connect and idle socket): a hang is given up after this. */
const S3_TIMEOUT_MS = 500;
/** What a refused call may take on top of it, on a loaded 2-core machine (the SDK retries, then gives up). */
const PROMPT_MS = 6000;

let env: TestEnvironment;
let media: MediaStoreProcess;
let db: Client;
let s3: LocalS3;
let proxy: TcpProxy;
const productId = randomUUID();
const applicantId = randomUUID();
const enrollmentId = randomUUID();
const owner = `productId=${productId}&applicantId=${applicantId}`;

beforeAll(async () => {
  env = await createTestEnvironment([
    migratorFor(databaseOptions, join(__dirname, '../src/database/migrations')),
  ]);
  s3 = await startLocalS3();
  proxy = await startTcpProxy('127.0.0.1', s3.port);
  media = await startMediaStoreProcess({
    ...env.env,
    INTERNAL_SERVICE_TOKEN: TEST_INTERNAL_SERVICE_TOKEN,
    ...s3.env('tessera-media-outage', proxy.url('http')),
    S3_TIMEOUT_MS: String(S3_TIMEOUT_MS),
    MEDIA_STAGED_SWEEP_INTERVAL_MS: '300',
  });
  db = new Client({ connectionString: env.db.url });
  await db.connect();
}, 60_000);
afterAll(async () => {
  await db?.end();
  await media?.stop();
  await env?.teardown();
  await proxy?.close();
  await s3?.close();
});

const http = () => request(media.url);
const put = () =>
  http()
    .put(`/internal/v1/resources/${enrollmentId}/selfie?${owner}`)
    .set(INTERNAL_AUTH)
    .set('content-type', 'application/octet-stream')
    .send(JPEG)
    .timeout(20_000);
const get = (seq: number) =>
  http()
    .get(`/internal/v1/resources/${enrollmentId}/selfie/${seq}?${owner}`)
    .set(INTERNAL_AUTH)
    .timeout(20_000);
const rows = async () => Number((await db.query('SELECT count(*) AS n FROM media.resources')).rows[0].n);
const staged = async () =>
  Number((await db.query('SELECT count(*) AS n FROM media.staged_uploads')).rows[0].n);

/** Expects the storage outage's 503 within PROMPT_MS. */
async function expectUnavailable(send: () => request.Test): Promise<void> {
  const started = Date.now();
  const res = await send();
  expect({ status: res.status, retryAfter: res.headers['retry-after'], message: res.body.message }).toEqual({
    status: 503,
    retryAfter: '1',
    message: 'Media storage temporarily unavailable; retry with back-off',
  });
  expect(Date.now() - started).toBeLessThan(PROMPT_MS);
}

describe.each([
  ['cut', () => proxy.cut(), () => proxy.restore()],
  ['hung', () => proxy.hold(), () => proxy.release()],
])('S3 %s', (_how, breakStorage, restore) => {
  let stored: number;

  beforeAll(async () => {
    stored = (await put().expect(201)).body.seq as number;
    breakStorage();
  });
  afterAll(() => restore());

  it('an upload answers 503 Retry-After: 1 at once, and writes nothing', async () => {
    const before = await rows();
    await expectUnavailable(put);
    expect(await rows()).toBe(before);
  }, 30_000);

  it('a download of a stored file answers 503 Retry-After: 1 at once', async () => {
    await expectUnavailable(() => get(stored));
  }, 30_000);

  it("a failed upload's staged row stays while S3 is away, and the sweep removes it once S3 is back", async () => {
    const before = await staged();
    await expectUnavailable(put);
    expect(await staged()).toBe(before + 1);
    // Past MEDIA_STAGED_TTL_SECONDS: every sweep (each 300 ms here) now tries to remove the bytes, and cannot.
    await db.query(`UPDATE media.staged_uploads SET created_at = now() - interval '2 hours'`);
    await new Promise((r) => setTimeout(r, 2000));
    expect(await staged()).toBe(before + 1);
    restore();
    const deadline = Date.now() + 20_000;
    while ((await staged()) > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
    expect(await staged()).toBe(0);
  }, 40_000);

  it('once S3 is back, uploads and downloads work again', async () => {
    restore();
    const next = await put().expect(201);
    const body = (await get(next.body.seq as number).expect(200)).body as Buffer;
    expect(Buffer.from(body).equals(JPEG)).toBe(true);
  }, 30_000);
});
