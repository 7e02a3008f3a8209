import { mediaFixture as fixture, SETUP_HOOK_TIMEOUT_MS } from '@tessera/testing';
import type { AddressInfo } from 'node:net';
import { Client } from 'pg';
import type { Harness } from './harness';
import {
  enrolledApplicant,
  filesUnder,
  handUpload,
  type MediaHarness,
  pause,
  startMediaHarness,
} from './media';

// SDK uploads that go wrong half-way, against the real media-store: what the client gets, what stays stored,
// and that no connection to media-store is held afterwards. The agent to media-store has two sockets here,
// so a leaked socket shows at once, and cuts a call after 3 s without bytes moving. The SDK upload cap equals
// media-store's video limit, as in production (100 MiB both), at 256 KiB.
const TIMEOUT_MS = 3000;
const CAP = 256 * 1024;
const QUOTA = 8;

let m: MediaHarness;
let h: Harness;
let port: number;
let a: Awaited<ReturnType<typeof enrolledApplicant>>;

const JPEG = fixture('tiny.jpg');
const PDF = fixture('tiny.pdf');
const WEBM = fixture('tiny.webm');

beforeAll(async () => {
  m = await startMediaHarness(
    { MEDIA_MAX_VIDEO_BYTES: String(CAP), MEDIA_MAX_UPLOADS_PER_SLOT: String(QUOTA) },
    {
      MEDIA_UPLOAD_MAX_BYTES: String(CAP),
      MEDIA_STORE_MAX_SOCKETS: '2',
      MEDIA_STORE_TIMEOUT_MS: String(TIMEOUT_MS),
    },
  );
  h = m.h;
  await h.app.listen(0, '127.0.0.1');
  port = (h.app.getHttpServer().address() as AddressInfo).port;
  a = await enrolledApplicant(h, 'upload-failures');
}, SETUP_HOOK_TIMEOUT_MS);
afterAll(() => m?.close());

const rows = async () =>
  Number((await h.sql<{ n: string }>('SELECT count(*) AS n FROM media.resources'))[0].n);
const blobs = () => filesUnder(m.media.fsRoot);

/** The ids of the applicant's active uploads of one slot. */
const active = async (slot: string) =>
  (
    await h.http().get(`/v1/applicants/${a.externalUserId}/resources`).set(h.auth(a.key)).expect(200)
  ).body.items
    .filter((r: { slot: string }) => r.slot === slot)
    .map((r: { id: string }) => r.id);

const sdkUpload = (slot: string, file: Buffer) =>
  h
    .http()
    .post(`/api/v1/sdk/uploads/${slot}`)
    .set('authorization', `Bearer ${a.token}`)
    .attach('file', file, 'upload.bin');

/** The partner's read of one stored upload's bytes; it needs a socket to media-store. */
const read = (id: string) =>
  h.http().get(`/v1/applicants/${a.externalUserId}/resources/${id}`).set(h.auth(a.key));

describe('connections to media-store', () => {
  it('a refusal media-store answers early releases its connection: more refusals than sockets, then a read answers at once', async () => {
    const stored = await h
      .http()
      .post('/api/v1/sdk/uploads/selfie')
      .set('authorization', `Bearer ${a.token}`)
      .attach('file', JPEG, 'selfie.jpg')
      .expect(201);
    const started = Date.now();
    // A pdf is not a selfie: media-store answers 415 after the first 4 KB, while the rest is still to come.
    for (let i = 0; i < 3; i++) {
      const upload = handUpload(port, a.token, 'selfie').file(Buffer.concat([PDF, Buffer.alloc(64 * 1024)]));
      await pause(300);
      upload.write(Buffer.alloc(64 * 1024));
      expect(await upload.end()).toEqual({ status: 415, body: { message: expect.any(String) } });
    }
    await read(stored.body.id).expect(200);
    // Well inside the idle timeout: no refusal held a socket until it was cut.
    expect(Date.now() - started).toBeLessThan(TIMEOUT_MS);
  }, 10_000);

  it('an upload that stalls is cut after the idle timeout: its socket serves others, nothing is stored', async () => {
    const stored = await h
      .http()
      .post('/api/v1/sdk/uploads/document_front')
      .set('authorization', `Bearer ${a.token}`)
      .attach('file', JPEG, 'front.jpg')
      .expect(201);
    const [rowsBefore, blobsBefore] = [await rows(), blobs().length];
    // Two stalled uploads hold both sockets until the timeout cuts them.
    const stalled = [0, 1].map(() =>
      handUpload(port, a.token, 'selfie').file(Buffer.concat([JPEG, Buffer.alloc(64 * 1024)])),
    );
    // Both hold their socket once media-store is writing them (a temporary file each). Not a fixed pause: on a
    // loaded machine the API can take longer to reach the PUT (guard, session read), and a read sent before then
    // takes a free socket, so the uploads are ended before the timeout and stored (201).
    for (let i = 0; i < 50 && blobs().length < blobsBefore + 2; i++) await pause(100);
    expect({ uploadsBeingWritten: blobs().length - blobsBefore }).toEqual({ uploadsBeingWritten: 2 });
    await read(stored.body.id).expect(200);
    // Ended only once both were cut (media-store drops the file of a cut upload): one that reached media-store later
    // than the other is still inside its idle timeout when the read answers, and ending it then completes it (201).
    for (let i = 0; i < 80 && blobs().length !== blobsBefore; i++) await pause(100);
    const answers = await Promise.all(
      stalled.map((upload) => upload.end().catch((err: Error) => ({ error: err.message }))),
    );
    expect(answers).toEqual([0, 1].map(() => ({ status: 408, body: { message: 'The upload stalled' } })));
    expect(await rows()).toBe(rowsBefore);
    for (let i = 0; i < 50 && blobs().length !== blobsBefore; i++) await pause(100);
    expect(blobs()).toHaveLength(blobsBefore);
  }, 15_000);
});

describe('an upload over the SDK cap', () => {
  it('413 in the error shape, nothing stored, the previous upload stays active (the cut body is not kept)', async () => {
    const first = await sdkUpload('liveness_video', WEBM).expect(201);
    const [rowsBefore, blobsBefore] = [await rows(), blobs().length];
    // Past the cap the parser cuts the file at exactly CAP bytes, which media-store's own limit lets through.
    const big = await sdkUpload('liveness_video', Buffer.concat([WEBM, Buffer.alloc(CAP, 7)])).expect(413);
    expect(big.body).toEqual({ message: 'The file is too large' });
    expect(await active('liveness_video')).toEqual([first.body.id]);
    expect(await rows()).toBe(rowsBefore);
    for (let i = 0; i < 50 && blobs().length !== blobsBefore; i++) await pause(100);
    expect(blobs()).toHaveLength(blobsBefore);
  });
});

describe('the multipart body going wrong after the file part', () => {
  let first: string;
  let before: { rows: number; blobs: number };

  beforeAll(async () => {
    first = (await sdkUpload('selfie', JPEG).expect(201)).body.id;
    before = { rows: await rows(), blobs: blobs().length };
  });

  /** Nothing of the refused upload is stored: no row, no blob, and the slot's upload before it still active. */
  const nothingStored = async () => {
    expect(await active('selfie')).toEqual([first]);
    expect(await rows()).toBe(before.rows);
    for (let i = 0; i < 50 && blobs().length !== before.blobs; i++) await pause(100);
    expect(blobs()).toHaveLength(before.blobs);
  };
  const afterFile = () => handUpload(port, a.token, 'selfie').file(JPEG);

  it('a second file part: 400, nothing stored', async () => {
    expect(await afterFile().file(PDF, 'other').end()).toEqual({
      status: 400,
      body: { message: 'Only one file part is accepted' },
    });
    await nothingStored();
  });

  it('too many fields after the file: 400, nothing stored', async () => {
    const upload = afterFile();
    for (let i = 0; i < 11; i++) upload.field(`note${i}`, 'x');
    expect(await upload.end()).toEqual({ status: 400, body: { message: 'Too many fields' } });
    await nothingStored();
  });

  it('a field declared JSON that is not: 400, nothing stored', async () => {
    expect(await afterFile().field('meta', '{', 'application/json').end()).toEqual({
      status: 400,
      body: { message: 'A JSON field is not valid JSON' },
    });
    await nothingStored();
  });

  it('a body that ends without its final boundary: 400, nothing stored', async () => {
    expect(await afterFile().end(false)).toEqual({
      status: 400,
      body: { message: 'Malformed multipart body' },
    });
    await nothingStored();
  });

  it('a connection closed after the file part, before the final boundary: nothing stored', async () => {
    const upload = afterFile().write('\r\n--tessera-hand-upload\r\n');
    await pause(300);
    upload.destroy();
    await pause(500);
    await nothingStored();
  });

  it('a clean body stores the file; text fields after it are ignored', async () => {
    const stored = await afterFile().field('documentType', 'PASSPORT').end();
    expect(stored).toMatchObject({ status: 201, body: { slot: 'selfie', documentType: null, active: true } });
    first = (stored.body as { id: string }).id;
    before = { rows: await rows(), blobs: blobs().length };
    await nothingStored();
  });
});

describe('an upload racing the submit (decision 0441)', () => {
  it('an upload whose body was read while the enrollment was being submitted: 409, nothing kept', async () => {
    const late = await enrolledApplicant(h, 'late-upload', { productId: a.productId, key: a.key });
    const rowsBefore = await rows();
    const blocker = new Client({ connectionString: h.env.db.url, options: '-c search_path=verification' });
    await blocker.connect();
    try {
      // The submit holds the applicant's lock; the upload's whole body arrives meanwhile.
      await blocker.query('BEGIN');
      await blocker.query('SELECT 1 FROM applicants WHERE id = $1 FOR UPDATE', [late.applicantId]);
      const upload = h
        .http()
        .post('/api/v1/sdk/uploads/selfie')
        .set('authorization', `Bearer ${late.token}`)
        .attach('file', JPEG, 'selfie.jpg')
        .then((r) => r);
      await pause(800);
      await blocker.query(`UPDATE enrollments SET status = 'submitted' WHERE id = $1`, [late.enrollmentId]);
      await blocker.query('COMMIT');
      const answer = await upload;
      expect(answer.status).toBe(409);
      expect(answer.body).toEqual({ message: expect.stringMatching(/uploads are closed/) });
    } finally {
      await blocker.end();
    }
    await pause(300);
    expect(await rows()).toBe(rowsBefore);
  });
});

describe('uploads per slot (decision 0446)', () => {
  it(`a slot of one verification takes ${QUOTA} uploads; the next answers 409 in the error shape, nothing stored`, async () => {
    const many = await enrolledApplicant(h, 'many-uploads', { productId: a.productId, key: a.key });
    const upload = () =>
      h
        .http()
        .post('/api/v1/sdk/uploads/selfie')
        .set('authorization', `Bearer ${many.token}`)
        .attach('file', JPEG, 'selfie.jpg');
    for (let i = 0; i < QUOTA; i++) await upload().expect(201);
    const rowsBefore = await rows();
    const refused = await upload().expect(409);
    expect(refused.body).toEqual({ message: expect.stringMatching(new RegExp(`at most ${QUOTA} uploads`)) });
    expect(await rows()).toBe(rowsBefore);
    // More refusals than the agent has sockets, then a read: each refusal released its connection.
    for (let i = 0; i < 3; i++) await upload().expect(409);
    const listed = await h.http().get('/v1/applicants/many-uploads/resources').set(h.auth(a.key)).expect(200);
    await h
      .http()
      .get(`/v1/applicants/many-uploads/resources/${listed.body.items[0].id as string}`)
      .set(h.auth(a.key))
      .timeout(TIMEOUT_MS - 500)
      .expect(200);
  });
});
