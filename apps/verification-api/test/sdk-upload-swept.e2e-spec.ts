import { mediaFixture as fixture, untilTrue } from '@tessera/testing';
import type { AddressInfo } from 'node:net';
import { Client } from 'pg';
import type { Harness } from './harness';
import { enrolledApplicant, filesUnder, handUpload, type MediaHarness, startMediaHarness } from './media';

// An SDK upload whose staged bytes media-store swept before verification-api committed them (decision 0460):
// the end user gets a clear error, and neither a resource nor bytes nor an enrollment record remain. The gap is
// made with the applicant's lock, held by the test while media-store sweeps on its own. Both expiries answer 503
// with `X-Error-Code: upload_expired` and `Retry-After: 0` (decision 0469): the client sends the file again now.

let m: MediaHarness;
let h: Harness;
let port: number;

const PNG = fixture('tiny.png');

/** What tells this 503 from any other server failure: send the same file again, now (decision 0469). */
const EXPIRED_HEADERS = { 'x-error-code': 'upload_expired', 'retry-after': '0' };

beforeAll(async () => {
  m = await startMediaHarness({ MEDIA_STAGED_SWEEP_INTERVAL_MS: '100' });
  h = m.h;
  await h.app.listen(0, '127.0.0.1');
  port = (h.app.getHttpServer().address() as AddressInfo).port;
});
afterAll(() => m?.close());

const count = async (sql: string, params: unknown[]) =>
  Number((await h.sql<{ n: string }>(`SELECT count(*) AS n FROM ${sql}`, params))[0].n);

it('an upload swept while it waited for its commit answers 503 upload_expired and leaves no resource, no bytes and no record', async () => {
  const a = await enrolledApplicant(h, 'swept-upload');
  const before = filesUnder(m.media.fsRoot).length;
  // The test holds the applicant's lock: the upload is staged, then waits for it before its commit.
  const locker = new Client({ connectionString: h.env.db.url });
  await locker.connect();
  try {
    await locker.query('BEGIN');
    await locker.query('SELECT 1 FROM verification.applicants WHERE id = $1 FOR UPDATE', [a.applicantId]);
    const upload = handUpload(port, a.token, 'selfie').file(PNG);
    const answer = upload.end();
    await untilTrue(async () => (await count('media.staged_uploads', [])) === 1, 'the staged upload');
    // Its row is written before its bytes: the upload is staged once the API waits for the applicant's lock.
    await untilTrue(
      async () =>
        (await count(
          "pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()",
          [],
        )) > 0,
      'the commit waiting for the lock',
    );
    // Older than MEDIA_STAGED_TTL_SECONDS: media-store's own sweep removes it.
    await h.sql("UPDATE media.staged_uploads SET created_at = created_at - interval '2 hours'");
    await untilTrue(async () => (await count('media.staged_uploads', [])) === 0, 'the sweep');
    await locker.query('ROLLBACK');
    expect(await answer).toEqual({ status: 503, body: { message: expect.stringContaining('expired') } });
    expect(await upload.headers()).toMatchObject(EXPIRED_HEADERS);
  } finally {
    await locker.end();
  }
  expect(await count('media.resources WHERE enrollment_id = $1', [a.enrollmentId])).toBe(0);
  expect(filesUnder(m.media.fsRoot).length).toBe(before);
  // The enrollment lists no upload for the slot, and the next try is stored.
  const session = await h
    .http()
    .get('/api/v1/sdk/session')
    .set({ authorization: `Bearer ${a.token}` })
    .expect(200);
  const selfie = (session.body.steps as { kind: string; uploads: unknown[] }[]).find(
    (s) => s.kind === 'selfie',
  );
  expect(selfie?.uploads ?? []).toEqual([]);
  expect((await handUpload(port, a.token, 'selfie').file(PNG).end()).status).toBe(201);
});

it('an upload whose body outlasts the staged TTL answers 503 upload_expired and leaves no resource, no bytes and no record (decision 0464)', async () => {
  const a = await enrolledApplicant(h, 'slow-upload');
  const before = filesUnder(m.media.fsRoot).length;
  const half = Math.floor(PNG.length / 2);
  const upload = handUpload(port, a.token, 'selfie').file(PNG.subarray(0, half));
  // The staged row is written when the bytes start: the body then takes "two hours" to finish.
  await untilTrue(async () => (await count('media.staged_uploads', [])) === 1, 'the staged upload');
  await h.sql("UPDATE media.staged_uploads SET created_at = created_at - interval '2 hours'");
  const answer = await upload.write(PNG.subarray(half)).end();
  expect(answer).toEqual({ status: 503, body: { message: expect.stringContaining('expired') } });
  expect(await upload.headers()).toMatchObject(EXPIRED_HEADERS);
  await untilTrue(async () => (await count('media.staged_uploads', [])) === 0, 'the expired row removed');
  expect(await count('media.resources WHERE enrollment_id = $1', [a.enrollmentId])).toBe(0);
  expect(filesUnder(m.media.fsRoot).length).toBe(before);
  expect((await handUpload(port, a.token, 'selfie').file(PNG).end()).status).toBe(201);
});
