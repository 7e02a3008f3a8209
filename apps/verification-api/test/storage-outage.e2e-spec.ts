import {
  type LocalS3,
  mediaFixture,
  SETUP_HOOK_TIMEOUT_MS,
  startLocalS3,
  startTcpProxy,
  type TcpProxy,
} from '@tessera/testing';
import type { Harness } from './harness';
import { enrolledApplicant, type MediaHarness, startMediaHarness } from './media';

// Media storage away, seen by a partner and by the hosted page (decision 0493): media-store's S3 (a real s3rver
// behind a TCP proxy) is cut; an SDK upload and a partner's read of stored bytes answer 503 `Retry-After: 1` in
// the contract's error shape, not 500 or 502, and nothing is recorded; once S3 is back both work again.

const JPEG = mediaFixture('tiny.jpg');
const UNAVAILABLE = { message: 'Media storage temporarily unavailable; retry with back-off' };
/** media-store's S3 bound and the relay's idle bound, in the ratio of their defaults (5 s and 30 s). */
const S3_TIMEOUT_MS = 1000;
const MEDIA_STORE_TIMEOUT_MS = 6 * S3_TIMEOUT_MS;

let s3: LocalS3;
let proxy: TcpProxy;
let m: MediaHarness;
let h: Harness;
let a: Awaited<ReturnType<typeof enrolledApplicant>>;

beforeAll(async () => {
  s3 = await startLocalS3();
  proxy = await startTcpProxy('127.0.0.1', s3.port);
  m = await startMediaHarness(
    { ...s3.env('tessera-verification-outage', proxy.url('http')), S3_TIMEOUT_MS: String(S3_TIMEOUT_MS) },
    { MEDIA_STORE_TIMEOUT_MS: String(MEDIA_STORE_TIMEOUT_MS) },
  );
  h = m.h;
  a = await enrolledApplicant(h, 'storage-outage');
}, SETUP_HOOK_TIMEOUT_MS);
afterAll(async () => {
  await m?.close();
  await proxy?.close();
  await s3?.close();
});

const rows = async () =>
  Number((await h.sql<{ n: string }>('SELECT count(*) AS n FROM media.resources'))[0].n);
const sdkUpload = () =>
  h
    .http()
    .post('/api/v1/sdk/uploads/selfie')
    .set('authorization', `Bearer ${a.token}`)
    .attach('file', JPEG, 'selfie.jpg');
const read = (id: string) =>
  h.http().get(`/v1/applicants/${a.externalUserId}/resources/${id}`).set(h.auth(a.key));

it('while S3 is cut, an SDK upload and a partner read answer 503 Retry-After: 1; then both work again', async () => {
  const stored = (await sdkUpload().expect(201)).body.id as string;
  const before = await rows();
  proxy.cut();
  try {
    const upload = await sdkUpload();
    expect({ status: upload.status, retryAfter: upload.headers['retry-after'], body: upload.body }).toEqual({
      status: 503,
      retryAfter: '1',
      body: UNAVAILABLE,
    });
    const bytes = await read(stored);
    expect({ status: bytes.status, retryAfter: bytes.headers['retry-after'], body: bytes.body }).toEqual({
      status: 503,
      retryAfter: '1',
      body: UNAVAILABLE,
    });
    expect(await rows()).toBe(before);
  } finally {
    proxy.restore();
  }
  await sdkUpload().expect(201);
  expect(Buffer.from((await read(stored).expect(200)).body as Buffer).equals(JPEG)).toBe(true);
}, 60_000);

it('while S3 hangs, an SDK upload and a partner read answer 503 Retry-After: 1 before the relay gives up', async () => {
  const stored = (await sdkUpload().expect(201)).body.id as string;
  const before = await rows();
  proxy.hold();
  try {
    for (const send of [sdkUpload, () => read(stored)]) {
      const started = Date.now();
      const res = await send();
      expect({ status: res.status, retryAfter: res.headers['retry-after'], body: res.body }).toEqual({
        status: 503,
        retryAfter: '1',
        body: UNAVAILABLE,
      });
      expect(Date.now() - started).toBeLessThan(MEDIA_STORE_TIMEOUT_MS);
    }
    expect(await rows()).toBe(before);
  } finally {
    proxy.release();
  }
  await sdkUpload().expect(201);
}, 60_000);
