import { type ClientRequest, request as httpRequest } from 'node:http';
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync, utimesSync } from 'node:fs';
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
  until,
  untilTrue,
  INTERNAL_AUTH,
} from '@tessera/testing';
import request from 'supertest';
import { databaseOptions } from '../src/database/database';

// Decision 0498: a media-store killed mid-upload (kill -9, a crash) runs no clean-up, so the `fs` driver's file in
// `.tmp/` stays. The sweep removes such files once nothing has written to them for MEDIA_STAGED_TTL_SECONDS, and
// leaves the file of an upload still streaming in. The built media-store as a process, killed for real.

const JPEG = mediaFixture('tiny.jpg');
/** An upload's bytes: a real JPEG, then filler past the bytes held back to sniff the type, so they reach the disk. */
const BODY = Buffer.concat([JPEG, Buffer.alloc(64 * 1024, 7)]);
const FIRST_PART = 16 * 1024;

let env: TestEnvironment;
let root: string;
const running: MediaStoreProcess[] = [];
const owner = `productId=${randomUUID()}&applicantId=${randomUUID()}`;

const tempFiles = (): string[] => {
  const dir = join(root, '.tmp');
  return existsSync(dir) ? readdirSync(dir).map((name) => join(dir, name)) : [];
};

/** Starts an upload of BODY and sends its first part only; answers the request and its eventual answer. */
function startUpload(media: MediaStoreProcess): {
  req: ClientRequest;
  enrollmentId: string;
  answer: Promise<{ status: number; body: string }>;
} {
  const { port } = new URL(media.url);
  const enrollmentId = randomUUID();
  const req = httpRequest({
    host: '127.0.0.1',
    port,
    method: 'PUT',
    path: `/internal/v1/resources/${enrollmentId}/selfie?${owner}`,
    headers: {
      ...INTERNAL_AUTH,
      'content-type': 'application/octet-stream',
      'content-length': String(BODY.length),
    },
  });
  const answer = new Promise<{ status: number; body: string }>((resolve, reject) => {
    req.on('response', (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (d: string) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
  });
  req.write(BODY.subarray(0, FIRST_PART));
  return { req, enrollmentId, answer };
}

/** The `.tmp/` file holding at least the first part of an upload, once there. */
const partialFile = async (except: string[] = []): Promise<string> =>
  (await until(
    () => tempFiles().find((f) => !except.includes(f) && statSync(f).size >= FIRST_PART),
    (file) => file !== undefined,
    { what: 'the upload in .tmp/' },
  ))!;

const boot = async (extra: Record<string, string>) => {
  const media = await startMediaStoreProcess({
    ...env.env,
    INTERNAL_SERVICE_TOKEN: TEST_INTERNAL_SERVICE_TOKEN,
    MEDIA_FS_ROOT: root,
    MEDIA_STAGED_TTL_SECONDS: '3600',
    ...extra,
  });
  running.push(media);
  return media;
};

beforeAll(async () => {
  env = await createTestEnvironment([
    migratorFor(databaseOptions, join(__dirname, '../src/database/migrations')),
  ]);
  root = mkdtempSync(join(tmpdir(), 'tessera-media-leftovers-'));
}, 60_000);
afterAll(async () => {
  for (const media of running) await media.stop();
  await env?.teardown();
  rmSync(root, { recursive: true, force: true });
});

describe('uploads cut short by a dead media-store (fs driver)', () => {
  let leftover: string;

  it('kill -9 mid-upload leaves the half-written file in .tmp/', async () => {
    const media = await boot({ MEDIA_STAGED_SWEEP_INTERVAL_MS: '0' });
    const { req, answer } = startUpload(media);
    answer.catch(() => undefined);
    leftover = await partialFile();
    media.child.kill('SIGKILL');
    await untilTrue(() => media.child.exitCode !== null || media.child.signalCode !== null, 'the exit');
    req.destroy();
    expect(existsSync(leftover)).toBe(true);
    expect(statSync(leftover).size).toBeGreaterThanOrEqual(FIRST_PART);
  }, 60_000);

  it('the sweep removes it once it is older than MEDIA_STAGED_TTL_SECONDS, and keeps an upload in flight', async () => {
    // Last written two hours ago: past the one-hour TTL.
    const twoHoursAgo = new Date(Date.now() - 2 * 3600 * 1000);
    utimesSync(leftover, twoHoursAgo, twoHoursAgo);
    // A replica that does not sweep takes an upload and holds it half-sent while another one sweeps.
    const taking = await boot({ MEDIA_STAGED_SWEEP_INTERVAL_MS: '0' });
    const { req, enrollmentId, answer } = startUpload(taking);
    const inFlight = await partialFile([leftover]);
    const sweeping = await boot({ MEDIA_STAGED_SWEEP_INTERVAL_MS: '200' });
    await untilTrue(() => !existsSync(leftover), 'the sweep to remove the leftover');
    // Two sweeps more, with the upload's file still in place and younger than the TTL.
    await new Promise((r) => setTimeout(r, 500));
    expect(existsSync(inFlight)).toBe(true);

    req.end(BODY.subarray(FIRST_PART));
    const done = await answer;
    expect(done.status).toBe(201);
    const { seq } = JSON.parse(done.body) as { seq: number };
    const stored = await request(sweeping.url)
      .get(`/internal/v1/resources/${enrollmentId}/selfie/${seq}?${owner}`)
      .set(INTERNAL_AUTH)
      .expect(200);
    expect(Buffer.from(stored.body).equals(BODY)).toBe(true);
    expect(tempFiles()).toEqual([]);
  }, 60_000);
});
