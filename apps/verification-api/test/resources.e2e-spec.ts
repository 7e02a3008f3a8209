import { createHash, randomUUID } from 'node:crypto';
import type { AppException } from '@tessera/platform';
import { ResourcesService } from '../src/modules/resources/resources.service';
import type { Credential, Harness } from './harness';
import { mediaFixture as fixture, SETUP_HOOK_TIMEOUT_MS } from '@tessera/testing';
import { enrolledApplicant, filesUnder, type MediaHarness, startMediaHarness } from './media';

let m: MediaHarness;
let h: Harness;
let a: Awaited<ReturnType<typeof enrolledApplicant>>;

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const JPEG = fixture('tiny.jpg');
const PNG = fixture('tiny.png');
const WEBP = fixture('tiny.webp');
const PDF = fixture('tiny.pdf');
const WEBM = fixture('tiny.webm');
const MP4 = fixture('tiny.mp4');

beforeAll(async () => {
  // A small image limit so the 413 case needs only a small file.
  m = await startMediaHarness({ MEDIA_MAX_IMAGE_BYTES: String(64 * 1024) });
  h = m.h;
  a = await enrolledApplicant(h, 'media-1');
}, SETUP_HOOK_TIMEOUT_MS);
afterAll(() => m?.close());

const upload = (
  token: string,
  slot: string,
  file: Buffer,
  opts: { fields?: Record<string, string>; contentType?: string; filename?: string } = {},
) => {
  const req = h.http().post(`/api/v1/sdk/uploads/${slot}`).set('authorization', `Bearer ${token}`);
  for (const [name, value] of Object.entries(opts.fields ?? {})) req.field(name, value);
  return req.attach('file', file, {
    filename: opts.filename ?? 'upload.bin',
    contentType: opts.contentType ?? 'application/octet-stream',
  });
};

const partner = (key: Credential, path: string) => h.http().get(path).set(h.auth(key));
const binary = (res: { body: unknown }) => res.body as Buffer;
const rows = async () =>
  Number((await h.sql<{ n: string }>('SELECT count(*) AS n FROM media.resources'))[0].n);
const blobs = () => filesUnder(m.media.fsRoot);

const ID = /^[0-9a-f]{32}\.[fbslca][1-9][0-9]*\.[0-9a-f]{16}$/;

describe('POST /api/v1/sdk/uploads/{slot}', () => {
  it('201 with the contract metadata; the type comes from the magic bytes, not the claimed type or name', async () => {
    const res = await upload(a.token, 'document_front', JPEG, {
      fields: { documentType: 'PASSPORT' },
      contentType: 'application/pdf',
      filename: 'scan.pdf',
    }).expect(201);
    expect(res.body).toEqual({
      id: expect.stringMatching(ID),
      enrollmentId: a.enrollmentId,
      kind: 'image',
      slot: 'document_front',
      documentType: 'PASSPORT',
      side: 'front',
      mime: 'image/jpeg',
      addedAtUtc: expect.any(String),
      source: 'docapture',
      active: true,
    });
    expect(res.body.id.startsWith(a.enrollmentId.replace(/-/g, ''))).toBe(true);
    expect(res.body.id.split('.')[1]).toBe('f1');
  });

  it('accepts png and webp images, pdf for company_doc, webm and mp4 for liveness_video (source liveness)', async () => {
    expect((await upload(a.token, 'selfie', PNG, { contentType: 'image/jpeg' }).expect(201)).body.mime).toBe(
      'image/png',
    );
    expect((await upload(a.token, 'additional', WEBP).expect(201)).body).toMatchObject({
      mime: 'image/webp',
    });
    expect((await upload(a.token, 'company_doc', PDF).expect(201)).body).toMatchObject({
      kind: 'pdf',
      mime: 'application/pdf',
    });
    const webm = await upload(a.token, 'liveness_video', WEBM, { contentType: 'video/mp4' }).expect(201);
    expect(webm.body).toMatchObject({ kind: 'video', mime: 'video/webm', source: 'liveness', side: null });
    const mp4 = await upload(a.token, 'liveness_video', MP4).expect(201);
    expect(mp4.body).toMatchObject({ kind: 'video', mime: 'video/mp4', active: true });
    expect(mp4.body.id.split('.')[1]).toBe('l2');
  });

  it('415 for a type not allowed in the slot and for unknown bytes, 413 over the limit: nothing is stored', async () => {
    const [rowsBefore, blobsBefore] = [await rows(), blobs().length];
    const pdfSelfie = await upload(a.token, 'selfie', PDF, { contentType: 'image/jpeg' }).expect(415);
    expect(pdfSelfie.body).toEqual({ message: expect.stringContaining('application/pdf') });
    await upload(a.token, 'liveness_video', JPEG).expect(415);
    await upload(a.token, 'document_back', Buffer.from('just some text, not an image'), {
      contentType: 'image/png',
    }).expect(415);
    const big = Buffer.concat([JPEG, Buffer.alloc(200 * 1024, 1)]);
    const tooLarge = await upload(a.token, 'document_back', big).expect(413);
    expect(tooLarge.body).toEqual({ message: expect.any(String) });
    expect(await rows()).toBe(rowsBefore);
    expect(blobs()).toHaveLength(blobsBefore);
    expect(blobs().filter((f) => f.includes('.tmp'))).toEqual([]);
  });

  it('415, never a 5xx, for headers the type sniffer throws on (cut short: PNG signature, ID3, TIFF, EBML)', async () => {
    const [rowsBefore, blobsBefore] = [await rows(), blobs().length];
    for (const hex of ['89504e470d0a1a0a', '494433', '49492a0008000000', '1a45dfa30001ff']) {
      const res = await upload(a.token, 'selfie', Buffer.from(hex, 'hex'));
      expect([res.status, res.body]).toEqual([415, { message: 'The file type is not recognised' }]);
    }
    expect(await rows()).toBe(rowsBefore);
    expect(blobs()).toHaveLength(blobsBefore);
  });

  it('400 "The file is empty" for an empty file part, never 415, with or without labels: nothing stored (decision 0487)', async () => {
    const [rowsBefore, blobsBefore] = [await rows(), blobs().length];
    for (const fields of [{}, { documentType: 'PASSPORT' }] as Record<string, string>[]) {
      const res = await upload(a.token, 'document_front', Buffer.alloc(0), {
        fields,
        contentType: 'image/jpeg',
      });
      expect([res.status, res.body, res.headers['x-error-code']]).toEqual([
        400,
        { message: 'The file is empty' },
        undefined,
      ]);
    }
    expect(await rows()).toBe(rowsBefore);
    expect(blobs()).toHaveLength(blobsBefore);
  });

  it('400 for an unknown slot, a bad label, a missing file part; 401 without a valid token', async () => {
    expect((await upload(a.token, 'passport', JPEG).expect(400)).body.message).toMatch(/slot/);
    await upload(a.token, 'document_back', JPEG, { fields: { side: 'left' } }).expect(400);
    await h
      .http()
      .post('/api/v1/sdk/uploads/selfie')
      .set('authorization', `Bearer ${a.token}`)
      .field('documentType', 'PASSPORT')
      .expect(400);
    await h.http().post('/api/v1/sdk/uploads/selfie').attach('file', JPEG, 'a.jpg').expect(401);
    await upload(`${a.token}x`, 'selfie', JPEG).expect(401);
  });

  it('side comes from the slot and source is docapture or liveness: anything else is 400, nothing stored', async () => {
    const rowsBefore = await rows();
    const refused = [
      ['selfie', { side: 'front' }, 'side: selfie has no side'],
      ['document_front', { side: 'back' }, 'side: must be front for document_front'],
      ['document_back', { side: 'front' }, 'side: must be back for document_back'],
      ['selfie', { source: 'camera' }, 'source: must be docapture or liveness'],
    ] as const;
    for (const [slot, fields, message] of refused) {
      const res = await upload(a.token, slot, JPEG, { fields });
      expect([slot, res.status, res.body]).toEqual([slot, 400, { message }]);
    }
    expect(await rows()).toBe(rowsBefore);
    const front = await upload(a.token, 'document_front', JPEG, {
      fields: { side: 'front', source: 'liveness' },
    }).expect(201);
    expect(front.body).toMatchObject({ slot: 'document_front', side: 'front', source: 'liveness' });
    const selfie = await upload(a.token, 'selfie', JPEG, { fields: { source: 'docapture' } }).expect(201);
    expect(selfie.body).toMatchObject({ side: null, source: 'docapture' });
  });

  it('400 {message} for a malformed multipart body (no boundary, never closed, a file part cut short); nothing stored', async () => {
    const rowsBefore = await rows();
    const blobsBefore = blobs().length;
    const raw = (contentType: string, body: string | Buffer) =>
      h
        .http()
        .post('/api/v1/sdk/uploads/selfie')
        .set('authorization', `Bearer ${a.token}`)
        .set('content-type', contentType)
        .send(body);
    const cutShort = Buffer.concat([
      Buffer.from(
        '--XYZ\r\nContent-Disposition: form-data; name="file"; filename="a.jpg"\r\nContent-Type: image/jpeg\r\n\r\n',
      ),
      JPEG.subarray(0, 64),
    ]);
    for (const [contentType, body] of [
      ['multipart/form-data', 'x'],
      ['multipart/form-data; boundary=XYZ', 'garbage'],
      ['multipart/form-data; boundary=XYZ', cutShort],
    ] as const) {
      const res = await raw(contentType, body).expect(400);
      expect(res.body).toEqual({ message: 'Malformed multipart body' });
    }
    expect(await rows()).toBe(rowsBefore);
    expect(blobs()).toHaveLength(blobsBefore);
    await upload(a.token, 'selfie', JPEG).expect(201);
  });

  it('409 once the verification is submitted: nothing is stored', async () => {
    const rowsBefore = await rows();
    await h.sql(`UPDATE verification.enrollments SET status = 'submitted' WHERE id = $1`, [a.enrollmentId]);
    try {
      const closed = await upload(a.token, 'selfie', JPEG).expect(409);
      expect(closed.body).toEqual({ message: expect.stringMatching(/submitted/) });
      expect(await rows()).toBe(rowsBefore);
    } finally {
      await h.sql(`UPDATE verification.enrollments SET status = 'open' WHERE id = $1`, [a.enrollmentId]);
    }
  });

  it('two concurrent uploads to one slot: both stored, exactly one active, the other in history', async () => {
    const b = await enrolledApplicant(h, 'media-concurrent', { productId: a.productId, key: a.key });
    const [one, two] = await Promise.all([
      upload(b.token, 'selfie', JPEG).expect(201),
      upload(b.token, 'selfie', PNG).expect(201),
    ]);
    expect(new Set([one.body.id.split('.')[1], two.body.id.split('.')[1]])).toEqual(new Set(['s1', 's2']));
    const active = await partner(a.key, `/v1/applicants/${b.externalUserId}/resources`).expect(200);
    expect(active.body.totalItems).toBe(1);
    expect(active.body.items[0].id.split('.')[1]).toBe('s2');
    const history = await partner(a.key, `/v1/applicants/${b.externalUserId}/uploads/history`).expect(200);
    expect(history.body.items.map((r: { resourceId: string }) => r.resourceId.split('.')[1])).toEqual(['s1']);
  });
});

describe('partner resources', () => {
  let first: { id: string };
  let second: { id: string };

  beforeAll(async () => {
    first = (
      await upload(a.token, 'document_back', JPEG, { fields: { documentType: 'ID_CARD' } }).expect(201)
    ).body;
    second = (
      await upload(a.token, 'document_back', PNG, { fields: { documentType: 'ID_CARD' } }).expect(201)
    ).body;
  });

  it('lists the active uploads by default, all with activeOnly=false; filters by kind and enrollmentId', async () => {
    const base = `/v1/applicants/${a.externalUserId}/resources`;
    const active = (await partner(a.key, base).expect(200)).body;
    expect(active.totalItems).toBe(active.items.length);
    expect(active.items.every((r: { active: boolean }) => r.active)).toBe(true);
    expect(active.items.map((r: { id: string }) => r.id)).toContain(second.id);
    expect(active.items.map((r: { id: string }) => r.id)).not.toContain(first.id);
    expect(Object.keys(active.items[0]).sort()).toEqual(
      [
        'active',
        'addedAtUtc',
        'documentType',
        'enrollmentId',
        'id',
        'kind',
        'mime',
        'side',
        'slot',
        'source',
      ].sort(),
    );
    const all = (await partner(a.key, `${base}?activeOnly=false`).expect(200)).body;
    expect(all.items.map((r: { id: string }) => r.id)).toEqual(expect.arrayContaining([first.id, second.id]));
    expect(all.totalItems).toBeGreaterThan(active.totalItems);
    const videos = (await partner(a.key, `${base}?kind=video&activeOnly=false`).expect(200)).body;
    expect(videos.items.map((r: { mime: string }) => r.mime).sort()).toEqual(['video/mp4', 'video/webm']);
    const pdfs = (await partner(a.key, `${base}?kind=pdf`).expect(200)).body;
    expect(pdfs.items.map((r: { slot: string }) => r.slot)).toEqual(['company_doc']);
    const images = (await partner(a.key, `${base}?kind=image`).expect(200)).body;
    expect(images.items.every((r: { kind: string }) => r.kind === 'image')).toBe(true);
    expect(
      (await partner(a.key, `${base}?enrollmentId=${a.enrollmentId}&kind=all`).expect(200)).body.totalItems,
    ).toBe(active.totalItems);
    const other = '00000000-0000-4000-8000-000000000000';
    expect((await partner(a.key, `${base}?enrollmentId=${other}`).expect(200)).body).toEqual({
      items: [],
      totalItems: 0,
    });
    for (const bad of ['kind=audio', 'activeOnly=yes', 'enrollmentId=abc']) {
      const res = await partner(a.key, `${base}?${bad}`).expect(400);
      expect(res.body).toEqual({ message: expect.any(String) });
    }
  });

  it('history lists the superseded upload, whose bytes stay readable by its own id', async () => {
    const history = (await partner(a.key, `/v1/applicants/${a.externalUserId}/uploads/history`).expect(200))
      .body;
    expect(history.totalItems).toBe(history.items.length);
    const row = history.items.find((r: { resourceId: string }) => r.resourceId === first.id);
    expect(row).toMatchObject({
      slot: 'document_back',
      active: false,
      mime: 'image/jpeg',
      documentType: 'ID_CARD',
    });
    const bytes = await partner(a.key, `/v1/applicants/${a.externalUserId}/resources/${first.id}`)
      .buffer(true)
      .parse(collect)
      .expect(200);
    expect(binary(bytes).equals(JPEG)).toBe(true);
  });

  it('GET streams the bytes with Content-Type, Content-Length, Accept-Ranges and the sha256 ETag; HEAD the same headers', async () => {
    const path = `/v1/applicants/${a.externalUserId}/resources/${second.id}`;
    const get = await partner(a.key, path).buffer(true).parse(collect).expect(200);
    expect(binary(get).equals(PNG)).toBe(true);
    expect(get.headers).toMatchObject({
      'content-type': 'image/png',
      'content-length': String(PNG.length),
      'accept-ranges': 'bytes',
      etag: `"${sha(PNG)}"`,
    });
    const head = await h.http().head(path).set(h.auth(a.key)).expect(200);
    expect(head.headers).toMatchObject({
      'content-type': 'image/png',
      'content-length': String(PNG.length),
      'accept-ranges': 'bytes',
      etag: `"${sha(PNG)}"`,
    });
  });

  it('one Range gives 206 with Content-Range; an unsatisfiable one gives 416', async () => {
    const videos = (
      await partner(a.key, `/v1/applicants/${a.externalUserId}/resources?kind=video`).expect(200)
    ).body;
    const path = `/v1/applicants/${a.externalUserId}/resources/${videos.items[0].id}`;
    const part = await partner(a.key, path)
      .set('range', 'bytes=10-109')
      .buffer(true)
      .parse(collect)
      .expect(206);
    expect(part.headers['content-range']).toBe(`bytes 10-109/${MP4.length}`);
    expect(part.headers['content-length']).toBe('100');
    expect(binary(part).equals(MP4.subarray(10, 110))).toBe(true);
    const tail = await partner(a.key, path).set('range', 'bytes=-16').buffer(true).parse(collect).expect(206);
    expect(binary(tail).equals(MP4.subarray(MP4.length - 16))).toBe(true);
    const none = await partner(a.key, path).set('range', `bytes=${MP4.length}-`).expect(416);
    expect(none.headers['content-range']).toBe(`bytes */${MP4.length}`);
    // An error, so the contract's error shape.
    expect(none.headers['content-type']).toMatch(/^application\/json/);
    expect(none.body).toEqual({ message: expect.any(String) });
  });

  it('If-Range: the range is served while it names the ETag or Last-Modified, the whole file (200) otherwise (decision 0479)', async () => {
    const videos = (
      await partner(a.key, `/v1/applicants/${a.externalUserId}/resources?kind=video`).expect(200)
    ).body;
    const path = `/v1/applicants/${a.externalUserId}/resources/${videos.items[0].id}`;
    const head = await h.http().head(path).set(h.auth(a.key)).expect(200);
    const ranged = (ifRange: string) =>
      partner(a.key, path).set('range', 'bytes=10-109').set('if-range', ifRange).buffer(true).parse(collect);
    for (const validator of [head.headers.etag as string, head.headers['last-modified'] as string]) {
      const part = await ranged(validator).expect(206);
      expect(binary(part).equals(MP4.subarray(10, 110))).toBe(true);
    }
    for (const other of [`"${sha(PNG)}"`, `W/${head.headers.etag}`, 'Thu, 01 Jan 2004 00:00:00 GMT']) {
      const whole = await ranged(other).expect(200);
      expect(whole.headers['content-range']).toBeUndefined();
      expect(whole.headers['content-length']).toBe(String(MP4.length));
      expect(binary(whole).equals(MP4)).toBe(true);
    }
  });

  it('If-None-Match naming the ETag (weakly, in a list, or *) gives 304 with ETag and no body; another tag the bytes (decision 0487)', async () => {
    const path = `/v1/applicants/${a.externalUserId}/resources/${second.id}`;
    const etag = `"${sha(PNG)}"`;
    for (const tag of [etag, `W/${etag}`, `"other", ${etag}`, '*']) {
      for (const method of ['get', 'head'] as const) {
        const http = h.http();
        const res = await http[method](path)
          .set(h.auth(a.key))
          .set('if-none-match', tag)
          .buffer(true)
          .parse(collect);
        expect([tag, method, res.status]).toEqual([tag, method, 304]);
        expect(res.headers).toMatchObject({ etag, 'cache-control': 'private, no-store' });
        expect(res.headers['last-modified']).toEqual(expect.any(String));
        expect(res.headers['content-type']).toBeUndefined();
        expect(res.headers['content-length']).toBeUndefined();
        expect(res.headers['transfer-encoding']).toBeUndefined();
      }
    }
    // With a Range too: the partner holds the whole file.
    await partner(a.key, path).set('if-none-match', etag).set('range', 'bytes=0-3').expect(304);
    const whole = await partner(a.key, path)
      .set('if-none-match', `"${sha(JPEG)}"`)
      .buffer(true)
      .parse(collect)
      .expect(200);
    expect(binary(whole).equals(PNG)).toBe(true);
    const part = await partner(a.key, path)
      .set('if-none-match', `"${sha(JPEG)}"`)
      .set('range', 'bytes=0-3')
      .buffer(true)
      .parse(collect)
      .expect(206);
    expect(binary(part).equals(PNG.subarray(0, 4))).toBe(true);
  });

  it('404 for a forged id, an id of another applicant and of another product; 403 for another product’s applicant', async () => {
    const path = (user: string, id: string) => `/v1/applicants/${user}/resources/${id}`;
    const forged = second.id.slice(0, -1) + (second.id.endsWith('a') ? 'b' : 'a');
    expect((await partner(a.key, path(a.externalUserId, forged)).expect(404)).body).toEqual({
      message: expect.any(String),
    });
    await partner(a.key, path(a.externalUserId, second.id.replace('.b2.', '.b9.'))).expect(404);
    await partner(a.key, path(a.externalUserId, 'not-an-id')).expect(404);
    // Same product, another applicant: the id is bound to its applicant.
    const other = await enrolledApplicant(h, 'media-2', { productId: a.productId, key: a.key });
    await partner(a.key, path(other.externalUserId, second.id)).expect(404);
    await h.http().head(path(other.externalUserId, second.id)).set(h.auth(a.key)).expect(404);
    // Another product with its own applicant: 404 for the foreign id; 403 on the first product's applicant.
    const foreign = await enrolledApplicant(h, 'media-foreign');
    await partner(foreign.key, path(foreign.externalUserId, second.id)).expect(404);
    await partner(foreign.key, path(a.externalUserId, second.id)).expect(403);
    await partner(foreign.key, `/v1/applicants/${a.externalUserId}/resources`).expect(403);
    await partner(foreign.key, `/v1/applicants/${a.externalUserId}/uploads/history`).expect(403);
    await partner(a.key, `/v1/applicants/nobody/resources`).expect(404);
  });
});

describe('ResourcesService (used by the hosted SDK and the step checks)', () => {
  it('listForEnrollment gives the metadata with sizeBytes and sha256; openBytes streams an upload by its id', async () => {
    const service = h.app.get(ResourcesService);
    const all = await service.listForEnrollment(a.productId, a.applicantId, a.enrollmentId);
    const active = await service.listForEnrollment(a.productId, a.applicantId, a.enrollmentId, {
      activeOnly: true,
    });
    expect(all.length).toBeGreaterThan(active.length);
    expect(active.every((r) => r.active && r.enrollmentId === a.enrollmentId)).toBe(true);
    const back = active.find((r) => r.slot === 'document_back');
    expect(back).toMatchObject({ mime: 'image/png', sizeBytes: PNG.length, sha256: sha(PNG), kind: 'image' });
    const opened = await service.openBytes(a.productId, a.applicantId, back!.id);
    expect(opened).toMatchObject({ mime: 'image/png', sizeBytes: PNG.length });
    const chunks: Buffer[] = [];
    for await (const chunk of opened.stream) chunks.push(chunk as Buffer);
    expect(Buffer.concat(chunks).equals(PNG)).toBe(true);
    for (const [productId, applicantId, id] of [
      [a.productId, randomUUID(), back!.id],
      [randomUUID(), a.applicantId, back!.id],
      [a.productId, a.applicantId, 'forged'],
    ]) {
      const err = (await service
        .openBytes(productId, applicantId, id)
        .catch((e: unknown) => e)) as AppException;
      expect(err.getStatus()).toBe(404);
    }
    expect(await service.listForEnrollment(a.productId, randomUUID(), a.enrollmentId)).toEqual([]);
  });
});

function collect(res: any, done: (err: Error | null, body: Buffer) => void) {
  const chunks: Buffer[] = [];
  res.on('data', (c: Buffer) => chunks.push(c));
  res.on('end', () => done(null, Buffer.concat(chunks)));
}
