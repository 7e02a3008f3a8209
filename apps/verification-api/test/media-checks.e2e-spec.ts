import { execFileSync } from 'node:child_process';
import { Readable } from 'node:stream';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { JobQueues } from '@tessera/platform';
import { mediaFixture, SETUP_HOOK_TIMEOUT_MS, until } from '@tessera/testing';
import sharp from 'sharp';
import { MediaInspectorService, ProbeUnavailableError } from '../src/modules/checks/media-inspector.service';
import type { Credential, Harness } from './harness';
import { type MediaHarness, startMediaHarness } from './media';
import { loadEnv } from '../src/config/env';
import { startChecksWorker, submitSteps } from './checks-support';

let m: MediaHarness;
let h: Harness;
let worker: NestFastifyApplication;
let productId: string;
let key: Credential;

let DOC: Buffer;
let SELFIE: Buffer;
let TRUNCATED: Buffer;
let LONG_CLIP: Buffer;

/** A noisy photo-like image (noise keeps the JPEG large enough that cutting it in half breaks its scans). */
const photo = (width: number, height: number) =>
  sharp({
    create: {
      width,
      height,
      channels: 3,
      background: '#808080',
      noise: { type: 'gaussian', mean: 128, sigma: 40 },
    },
  })
    .jpeg({ quality: 80 })
    .toBuffer();

beforeAll(async () => {
  m = await startMediaHarness();
  h = m.h;
  worker = await startChecksWorker(h, {
    ...m.media.clientEnv,
    // The fixture clips last exactly 1 s.
    CHECKS_LIVENESS_MIN_SECONDS: '0.5',
    CHECKS_LIVENESS_MAX_SECONDS: '30',
  });
  ({ productId, key } = await h.tenant());
  await h.admin('post', `/products/${productId}/levels`, {
    name: 'MEDIA_KYC',
    applicantType: 'individual',
    isDefault: true,
    steps: [{ kind: 'identity_doc' }, { kind: 'selfie' }, { kind: 'liveness' }, { kind: 'poa' }],
  });
  await h.admin('post', `/products/${productId}/levels`, {
    name: 'MEDIA_KYB',
    applicantType: 'company',
    isDefault: true,
    companyRequiredDocuments: ['certificate_of_incorporation', 'register_extract'],
    steps: [{ kind: 'company_docs' }],
  });
  DOC = await photo(640, 420);
  SELFIE = await photo(360, 480);
  const big = await photo(800, 600);
  TRUNCATED = big.subarray(0, Math.floor(big.length / 3));
  // A 40 s clip at 1 frame per second (over the 30 s bound), made by Debian's ffmpeg.
  const dir = mkdtempSync(join(tmpdir(), 'mchecks-'));
  try {
    const file = join(dir, 'long.webm');
    execFileSync('ffmpeg', [
      ...['-v', 'error', '-f', 'lavfi', '-i', 'color=c=gray:s=32x32:r=1', '-t', '40'],
      ...['-c:v', 'libvpx', '-b:v', '10k', file],
    ]);
    LONG_CLIP = readFileSync(file);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}, SETUP_HOOK_TIMEOUT_MS);
afterAll(async () => {
  await worker?.close();
  await m?.close();
});

/** An applicant with an open enrollment and its SDK session token. */
async function applicant(body: Record<string, unknown>) {
  const externalUserId = body.externalUserId as string;
  const created = await h.http().post('/v1/applicants').set(h.auth(key)).send(body).expect(201);
  const session = await h
    .http()
    .post(`/v1/applicants/${externalUserId}/verifications`)
    .set(h.auth(key))
    .expect(202);
  const link = await h.http().get(`/api/v1/sdk/links/${session.body.shortCode}`).expect(200);
  return {
    externalUserId,
    id: created.body.id as string,
    enrollmentId: session.body.enrollmentId as string,
    token: link.body.token as string,
  };
}
type Applicant = Awaited<ReturnType<typeof applicant>>;

const upload = (a: Applicant, slot: string, file: Buffer, fields: Record<string, string> = {}) => {
  const req = h.http().post(`/api/v1/sdk/uploads/${slot}`).set('authorization', `Bearer ${a.token}`);
  for (const [name, value] of Object.entries(fields)) req.field(name, value);
  return req
    .attach('file', file, { filename: 'upload.bin', contentType: 'application/octet-stream' })
    .expect(201);
};

type StepRow = {
  id: string;
  kind: string;
  review_status: string;
  review_answer: string | null;
  review_reject_type: string | null;
  reject_labels: string[];
  updated_at: Date;
  check_result: {
    uploads: { slot: string; width?: number; durationSeconds?: number; error?: string }[];
    problems: { label: string; item: string }[];
    reason?: string;
  };
};
const stepRows = (a: Applicant) =>
  h.sql<StepRow>(`SELECT * FROM applicant_steps WHERE applicant_id = $1 ORDER BY kind`, [a.id]);
const settledSteps = async (a: Applicant) => {
  const rows = await until(
    () => stepRows(a),
    (list) => list.length > 0 && !list.some((s) => ['submitted', 'in_review'].includes(s.review_status)),
  );
  return Object.fromEntries(rows.map((r) => [r.kind, r]));
};
const status = async (a: Applicant) =>
  (await h.http().get(`/v1/applicants/${a.externalUserId}/status`).set(h.auth(key)).expect(200)).body;
const checkedCount = async (a: Applicant) =>
  Number(
    (
      await h.sql<{ n: string }>(
        `SELECT count(*) AS n FROM review_events WHERE applicant_id = $1 AND event_type = 'step.checked'`,
        [a.id],
      )
    )[0].n,
  );

describe('media and document checks in the worker', () => {
  it('readable uploads of the right size and length are GREEN on every media step: approved', async () => {
    const a = await applicant({ externalUserId: 'm-good' });
    await upload(a, 'document_front', DOC, { documentType: 'id_card' });
    await upload(a, 'document_back', DOC, { documentType: 'id_card' });
    await upload(a, 'selfie', SELFIE);
    await upload(a, 'liveness_video', mediaFixture('tiny.webm'));
    await upload(a, 'additional', mediaFixture('tiny.pdf'), { documentType: 'utility_bill' });
    await submitSteps(h, a, ['identity_doc', 'selfie', 'liveness', 'poa']);
    const steps = await settledSteps(a);
    for (const kind of ['identity_doc', 'selfie', 'liveness', 'poa']) {
      expect(steps[kind]).toMatchObject({ review_status: 'completed', review_answer: 'GREEN' });
    }
    expect(steps.identity_doc.check_result.uploads).toEqual([
      expect.objectContaining({ slot: 'document_front', width: 640, height: 420 }),
      expect.objectContaining({ slot: 'document_back', width: 640, height: 420 }),
    ]);
    expect(steps.liveness.check_result.uploads[0]).toMatchObject({ durationSeconds: 1 });
    expect(await status(a)).toMatchObject({ status: 'approved', reviewAnswer: 'GREEN' });
  });

  it('a missing back side, a tiny selfie, a 40 s clip and no proof of address are each RED RETRY with a label', async () => {
    const a = await applicant({ externalUserId: 'm-bad' });
    await upload(a, 'document_front', DOC, { documentType: 'id_card' });
    await upload(a, 'selfie', mediaFixture('tiny.jpg'));
    await upload(a, 'liveness_video', LONG_CLIP);
    await submitSteps(h, a, ['identity_doc', 'selfie', 'liveness', 'poa']);
    const steps = await settledSteps(a);
    const red = (labels: string[]) => ({
      review_status: 'completed',
      review_answer: 'RED',
      review_reject_type: 'RETRY',
      reject_labels: labels,
    });
    expect(steps.identity_doc).toMatchObject(red(['DOCUMENT_MISSING']));
    expect(steps.identity_doc.check_result.problems).toEqual([
      expect.objectContaining({ item: 'document_back' }),
    ]);
    expect(steps.selfie).toMatchObject(red(['LOW_QUALITY']));
    expect(steps.liveness).toMatchObject(red(['LIVENESS_DURATION']));
    expect(steps.liveness.check_result.uploads[0].durationSeconds).toBeGreaterThan(39);
    expect(steps.poa).toMatchObject(red(['PROOF_OF_ADDRESS_MISSING']));
    expect(await status(a)).toMatchObject({
      status: 'rejected',
      reviewAnswer: 'RED',
      reviewRejectType: 'RETRY',
    });
  });

  it('a truncated image or clip is UNREADABLE_*, an unset documentType DOCUMENT_TYPE_MISSING; a passport needs no back', async () => {
    const broken = await applicant({ externalUserId: 'm-broken' });
    await upload(broken, 'document_front', TRUNCATED);
    await upload(broken, 'liveness_video', mediaFixture('tiny.webm').subarray(0, 60));
    await submitSteps(h, broken, ['identity_doc', 'liveness']);
    const { identity_doc: doc, liveness } = await settledSteps(broken);
    expect(liveness).toMatchObject({ review_answer: 'RED', reject_labels: ['UNREADABLE_VIDEO'] });
    expect(doc).toMatchObject({
      review_answer: 'RED',
      reject_labels: ['UNREADABLE_DOCUMENT', 'DOCUMENT_TYPE_MISSING'],
    });
    expect(doc.check_result.uploads[0].error).toEqual(expect.any(String));

    const passport = await applicant({ externalUserId: 'm-passport' });
    await upload(passport, 'document_front', DOC, { documentType: 'passport' });
    await submitSteps(h, passport, ['identity_doc']);
    expect((await settledSteps(passport)).identity_doc).toMatchObject({ review_answer: 'GREEN' });
  });

  it('company documents: every required type and enough of them, else COMPANY_DOCUMENTS_MISSING', async () => {
    const partial = await applicant({
      externalUserId: 'c-partial',
      type: 'company',
      companyName: 'Partial AB',
    });
    await upload(partial, 'company_doc', mediaFixture('tiny.pdf'), {
      documentType: 'certificate_of_incorporation',
    });
    await submitSteps(h, partial, ['company_docs']);
    const { company_docs: red } = await settledSteps(partial);
    expect(red).toMatchObject({
      review_answer: 'RED',
      review_reject_type: 'RETRY',
      reject_labels: ['COMPANY_DOCUMENTS_MISSING'],
    });
    expect(red.check_result.problems.map((p) => p.item)).toEqual([
      'company_doc:register_extract',
      'company_doc',
    ]);

    const full = await applicant({ externalUserId: 'c-full', type: 'company', companyName: 'Complete AB' });
    await upload(full, 'company_doc', mediaFixture('tiny.pdf'), {
      documentType: 'certificate_of_incorporation',
    });
    await upload(full, 'company_doc', DOC, { documentType: 'register_extract' });
    await submitSteps(h, full, ['company_docs']);
    expect((await settledSteps(full)).company_docs).toMatchObject({ review_answer: 'GREEN' });
    expect(await status(full)).toMatchObject({ status: 'approved' });
  });

  it('a redelivered check job of a media step changes nothing', async () => {
    const a = await applicant({ externalUserId: 'm-twice' });
    await upload(a, 'selfie', SELFIE);
    await submitSteps(h, a, ['selfie']);
    const { selfie } = await settledSteps(a);
    expect(selfie).toMatchObject({ review_answer: 'GREEN' });
    expect(await checkedCount(a)).toBe(1);
    const queues = worker.get(JobQueues);
    await queues.add(
      'VERIFICATION_STEP_CHECK',
      { stepId: selfie.id, applicantId: a.id, kind: 'selfie', submittedAt: new Date().toISOString() },
      { jobId: `redelivery-${selfie.id}` },
    );
    await until(
      () => queues.queue('verification.checks').getJobState(`redelivery-${selfie.id}`),
      (state) => state === 'completed',
    );
    expect(await checkedCount(a)).toBe(1);
    expect((await stepRows(a))[0]).toMatchObject({ review_answer: 'GREEN', updated_at: selfie.updated_at });
  });

  it('a HEIC selfie libvips cannot decode goes to an operator, not RED', async () => {
    const a = await applicant({ externalUserId: 'm-heic' });
    // An ftyp box of brand heic (what media-store sniffs as image/heic) with no decodable picture in it.
    const heic = Buffer.concat([
      Buffer.from([0, 0, 0, 24]),
      Buffer.from('ftypheic\0\0\0\0mif1heic'),
      Buffer.alloc(5000),
    ]);
    expect((await upload(a, 'selfie', heic)).body.mime).toBe('image/heic');
    await submitSteps(h, a, ['selfie']);
    const { selfie } = await settledSteps(a);
    expect(selfie).toMatchObject({ review_status: 'awaitingOperatorReview', review_answer: null });
    expect(selfie.check_result).toMatchObject({ reason: expect.stringContaining('image/heic') });
    expect(await status(a)).toMatchObject({ status: 'in_review' });
  });

  it('without ffprobe the clip is not judged: the inspection throws (the job is retried) instead of UNREADABLE', async () => {
    const inspector = new MediaInspectorService(
      loadEnv({ ...h.env.env, FFPROBE_PATH: '/nonexistent/ffprobe' }),
    );
    await expect(inspector.video(Readable.from([mediaFixture('tiny.webm')]))).rejects.toBeInstanceOf(
      ProbeUnavailableError,
    );
    const working = new MediaInspectorService(loadEnv(h.env.env));
    expect(await working.video(Readable.from([mediaFixture('tiny.mp4')]))).toEqual({
      ok: true,
      durationSeconds: 1,
    });
  });
});
