import { applicantReviewedData } from '@tessera/contracts';
import {
  type DispatcherProcess,
  makeCertificate,
  startDispatcherProcess,
  SETUP_HOOK_TIMEOUT_MS,
  until,
} from '@tessera/testing';
import { createHmac } from 'node:crypto';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { type Credential, type Harness, startHarness } from './harness';

let h: Harness;
let dispatcher: DispatcherProcess;
let receiver: Server;
let receiverUrl: string;
const received: { headers: Record<string, string | string[] | undefined>; body: string }[] = [];
let productId: string;
let key: Credential;
let sandboxKey: Credential;

beforeAll(async () => {
  const cert = makeCertificate();
  receiver = createServer({ key: cert.key, cert: cert.cert }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      res.writeHead(200).end('ok');
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  receiverUrl = `https://127.0.0.1:${(receiver.address() as AddressInfo).port}/kyc`;
  h = await startHarness();
  dispatcher = await startDispatcherProcess({ ...h.env.env, WEBHOOK_CA_FILE: cert.certFile });
  ({ productId, key } = await h.tenant());
  sandboxKey = await h.admin<Credential>('post', `/products/${productId}/keys`, { environment: 'sandbox' });
  await h.admin('post', `/products/${productId}/levels`, {
    name: 'SANDBOX_KYC',
    applicantType: 'individual',
    isDefault: true,
    steps: [{ kind: 'personal_information' }, { kind: 'identity_doc' }, { kind: 'aml', optional: true }],
  });
}, SETUP_HOOK_TIMEOUT_MS);

afterAll(async () => {
  await dispatcher?.stop();
  await h?.close();
  receiver?.closeAllConnections();
  await new Promise((resolve) => receiver?.close(resolve));
});

const review = (externalUserId: string, body: unknown, credential = sandboxKey) =>
  h
    .http()
    .post(`/v1/applicants/${externalUserId}/sandbox/review`)
    .set(h.auth(credential))
    .send(body as object);

describe('POST /v1/applicants/{externalUserId}/sandbox/review', () => {
  it('is not there for production credentials: 404 {message}', async () => {
    await h.http().post('/v1/applicants').set(h.auth(key)).send({ externalUserId: 'p-1' }).expect(201);
    const res = await review('p-1', { reviewAnswer: 'GREEN' }, key).expect(404);
    expect(Object.keys(res.body)).toEqual(['message']);
  });

  it('does not decide an applicant created with production credentials: 422 {message}, nothing reviewed', async () => {
    await h.http().post('/v1/applicants').set(h.auth(key)).send({ externalUserId: 'p-real' }).expect(201);
    const res = await review('p-real', { reviewAnswer: 'GREEN' }).expect(422);
    expect(res.body).toEqual({ message: expect.stringContaining('production credentials') });
    const status = await h.http().get('/v1/applicants/p-real/status').set(h.auth(key)).expect(200);
    expect(status.body).toMatchObject({ status: 'init', reviewAnswer: null });
    const [row] = await h.sql<{ n: number }>(
      "SELECT count(*)::int AS n FROM applicant_steps s JOIN applicants a ON a.id = s.applicant_id WHERE a.external_user_id = 'p-real' AND s.review_answer IS NOT NULL",
    );
    expect(row.n).toBe(0);
  });

  it('completes a RED review as production does and fires applicantReviewed to the partner over HTTPS', async () => {
    const put = await h
      .http()
      .put('/v1/webhooks')
      .set(h.auth(sandboxKey))
      .send({ url: receiverUrl })
      .expect(200);
    const secret = put.body.signingSecret as string;
    await h
      .http()
      .post('/v1/applicants')
      .set(h.auth(sandboxKey))
      .send({ externalUserId: 's-red' })
      .expect(201);

    const res = await review('s-red', {
      reviewAnswer: 'RED',
      reviewRejectType: 'RETRY',
      rejectLabels: ['BAD_PROOF_OF_IDENTITY'],
      moderationComment: 'Blurry document',
      steps: { identity_doc: 'RED', aml: 'GREEN' },
    }).expect(200);
    expect(res.body).toMatchObject({
      externalUserId: 's-red',
      status: 'rejected',
      reviewAnswer: 'RED',
      reviewRejectType: 'RETRY',
      rejectLabels: ['BAD_PROOF_OF_IDENTITY'],
      moderationComment: 'Blurry document',
      attempt: 1,
      reviewedAtUtc: expect.any(String),
    });
    expect(res.body.steps).toEqual([
      expect.objectContaining({
        kind: 'personal_information',
        reviewStatus: 'completed',
        reviewAnswer: 'GREEN',
      }),
      expect.objectContaining({
        kind: 'identity_doc',
        reviewStatus: 'completed',
        reviewAnswer: 'RED',
        reviewRejectType: 'RETRY',
      }),
    ]);
    const steps = await h.http().get('/v1/applicants/s-red/steps').set(h.auth(sandboxKey)).expect(200);
    expect(steps.body.steps).toEqual(res.body.steps);
    const history = await h
      .http()
      .get('/v1/applicants/s-red/review-history')
      .set(h.auth(sandboxKey))
      .expect(200);
    expect(history.body.items.map((i: { eventType: string }) => i.eventType)).toContain('applicant.rejected');

    const delivery = await until(
      () => received.find((r) => r.body.includes('applicantReviewed') && r.body.includes('s-red')),
      (r) => r !== undefined,
    );
    const signature = createHmac('sha256', Buffer.from(secret, 'utf8')).update(delivery!.body).digest('hex');
    expect(delivery!.headers['x-webhook-signature']).toBe(signature);
    const envelope = JSON.parse(delivery!.body) as Record<string, unknown>;
    const data = (envelope.data ?? envelope) as Record<string, unknown>;
    expect(applicantReviewedData.safeParse(data).success).toBe(true);
    expect(data).toMatchObject({
      externalUserId: 's-red',
      levelName: 'SANDBOX_KYC',
      reviewStatus: 'completed',
      reviewResult: {
        reviewAnswer: 'RED',
        reviewRejectType: 'RETRY',
        rejectLabels: ['BAD_PROOF_OF_IDENTITY'],
      },
      sandbox: true,
      steps: res.body.steps,
    });
  });

  it('a GREEN review approves every required step', async () => {
    await h
      .http()
      .post('/v1/applicants')
      .set(h.auth(sandboxKey))
      .send({ externalUserId: 's-green' })
      .expect(201);
    const res = await review('s-green', { reviewAnswer: 'GREEN' }).expect(200);
    expect(res.body).toMatchObject({ status: 'approved', reviewAnswer: 'GREEN', reviewRejectType: null });
    expect(res.body.steps.map((s: { reviewAnswer: string }) => s.reviewAnswer)).toEqual(['GREEN', 'GREEN']);
  });

  it('refuses contradictions and unknown steps with 400 {message}, an unknown applicant with 404', async () => {
    await h
      .http()
      .post('/v1/applicants')
      .set(h.auth(sandboxKey))
      .send({ externalUserId: 's-bad' })
      .expect(201);
    const mixed = await review('s-bad', { reviewAnswer: 'GREEN', steps: { identity_doc: 'RED' } }).expect(
      400,
    );
    expect(mixed.body.message).toMatch(/steps/);
    const redOnlyOptional = await review('s-bad', { reviewAnswer: 'RED', steps: { aml: 'RED' } }).expect(400);
    expect(redOnlyOptional.body.message).toMatch(/required step RED/);
    const unknown = await review('s-bad', { reviewAnswer: 'RED', steps: { liveness: 'RED' } }).expect(400);
    expect(unknown.body.message).toMatch(/liveness/);
    await review('s-bad', { reviewAnswer: 'MAYBE' }).expect(400);
    await review('nobody', { reviewAnswer: 'GREEN' }).expect(404);
    const status = await h.http().get('/v1/applicants/s-bad/status').set(h.auth(sandboxKey)).expect(200);
    expect(status.body.status).toBe('init');
  });
});
