import { TEST_ADMIN_TOKEN } from '@tessera/testing';
import { runCli } from '../src/cli/run';
import { type Credential, type Harness, INDIVIDUAL_LEVEL, startHarness } from './harness';

let h: Harness;
let productId: string;
let key: Credential;

const bearer = { authorization: `Bearer ${TEST_ADMIN_TOKEN}` };

beforeAll(async () => {
  h = await startHarness();
  ({ productId, key } = await h.tenant());
  await h.admin('post', `/products/${productId}/levels`, INDIVIDUAL_LEVEL);
}, 60_000);
afterAll(() => h?.close());

async function applicant(externalUserId: string) {
  const created = await h.http().post('/v1/applicants').set(h.auth(key)).send({ externalUserId }).expect(201);
  const session = await h
    .http()
    .post(`/v1/applicants/${externalUserId}/verifications`)
    .set(h.auth(key))
    .expect(202);
  return { id: created.body.id as string, enrollmentId: session.body.enrollmentId as string };
}

const act = (externalUserId: string, action: string, body: object = {}) =>
  h
    .http()
    .post(`/admin/v1/products/${productId}/applicants/${externalUserId}/${action}`)
    .set(bearer)
    .send(body);
const mint = (externalUserId: string) =>
  h.http().post(`/v1/applicants/${externalUserId}/verifications`).set(h.auth(key));
const status = async (externalUserId: string) =>
  (await h.http().get(`/v1/applicants/${externalUserId}/status`).set(h.auth(key)).expect(200)).body;
const history = async (externalUserId: string) =>
  (
    await h.http().get(`/v1/applicants/${externalUserId}/review-history`).set(h.auth(key)).expect(200)
  ).body.items.map((i: { eventType: string; actorType: string }) => `${i.eventType}/${i.actorType}`);
const outbox = (applicantId: string, eventType: string) =>
  h.sql<{ data: Record<string, unknown> }>(
    'SELECT data FROM outbox WHERE entity_id = $1 AND event_type = $2 ORDER BY created_at',
    [applicantId, eventType],
  );

describe('operator actions on an applicant', () => {
  it('deactivate stops new links and closes the open one; activate restores the status', async () => {
    const a = await applicant('u-off');
    const off = await act('u-off', 'deactivate', { reason: 'Duplicate account' }).expect(200);
    expect(off.body).toMatchObject({ action: 'deactivate', applicant: { status: 'deactivated' } });
    const refused = await mint('u-off').expect(422);
    expect(refused.body).toEqual({ message: 'Applicant is deactivated' });
    const [enrollment] = await h.sql<{ status: string }>('SELECT status FROM enrollments WHERE id = $1', [
      a.enrollmentId,
    ]);
    expect(enrollment.status).toBe('failed');
    expect((await act('u-off', 'deactivate').expect(409)).body).toEqual({
      message: 'The applicant is deactivated already',
    });
    await act('u-off', 'reset').expect(409);
    const on = await act('u-off', 'activate').expect(200);
    expect(on.body.applicant.status).toBe('init');
    await act('u-off', 'activate').expect(409);
    await mint('u-off').expect(202);
    expect(await history('u-off')).toEqual(
      expect.arrayContaining(['applicant.deactivated/operator', 'applicant.activated/operator']),
    );
    const [deactivated] = await outbox(a.id, 'applicantDeactivated');
    expect(deactivated.data).toMatchObject({
      applicantId: a.id,
      externalUserId: 'u-off',
      status: 'deactivated',
      reason: 'Duplicate account',
      sandbox: false,
    });
    expect(await outbox(a.id, 'applicantActivated')).toEqual([
      { data: expect.objectContaining({ status: 'init' }) },
    ]);
  });

  it('reset puts every step back to pending and clears the verdict and the risk', async () => {
    const a = await applicant('u-reset');
    for (const kind of ['personal_information', 'identity_doc', 'selfie']) {
      await h.sql(
        `INSERT INTO applicant_steps (applicant_id, enrollment_id, kind, review_status, review_answer)
         VALUES ($1, $2, $3, 'completed', 'GREEN')`,
        [a.id, a.enrollmentId, kind],
      );
    }
    await h.sql(
      `UPDATE applicants SET status = 'approved', review_answer = 'GREEN', risk_level = 'low', reviewed_at = now()
        WHERE id = $1`,
      [a.id],
    );
    await act('u-reset', 'reset', { reason: 'Customer asked to redo' }).expect(200);
    expect(await status('u-reset')).toMatchObject({
      status: 'init',
      reviewAnswer: null,
      riskLevel: 'unknown',
      reviewedAtUtc: null,
    });
    const steps = await h.http().get('/v1/applicants/u-reset/steps').set(h.auth(key)).expect(200);
    expect(steps.body.steps.map((s: { reviewStatus: string }) => s.reviewStatus)).toEqual([
      'pending',
      'pending',
      'pending',
    ]);
    expect(await history('u-reset')).toContain('applicant.reset/operator');
    expect(await outbox(a.id, 'applicantReset')).toHaveLength(1);
  });

  it('blocklist (CLI) rejects the applicant FINAL with BLOCKLIST and refuses links; unblock lifts the flag', async () => {
    const a = await applicant('u-block');
    const cli = (...argv: string[]) => runCli(argv, h.env.env);
    const blocked = await cli(
      'blocklist-applicant',
      '--product',
      productId,
      '--applicant',
      'u-block',
      '--reason',
      'Fraud ring',
    );
    expect(blocked.code).toBe(0);
    expect(blocked.output).toMatchObject({
      action: 'blocklist',
      applicant: {
        status: 'rejected',
        reviewAnswer: 'RED',
        reviewRejectType: 'FINAL',
        rejectLabels: ['BLOCKLIST'],
        moderationComment: 'Fraud ring',
      },
    });
    expect(await outbox(a.id, 'applicantReviewed')).toEqual([
      {
        data: expect.objectContaining({
          reviewResult: expect.objectContaining({ reviewRejectType: 'FINAL', rejectLabels: ['BLOCKLIST'] }),
        }),
      },
    ]);
    expect((await mint('u-block').expect(422)).body).toEqual({ message: 'Applicant is blocklisted' });
    expect((await cli('blocklist-applicant', '--product', productId, '--applicant', 'u-block')).code).toBe(1);
    const unblocked = await cli('unblock-applicant', '--product', productId, '--applicant', 'u-block');
    expect(unblocked.code).toBe(0);
    await mint('u-block').expect(202);
    expect(await history('u-block')).toEqual(
      expect.arrayContaining(['applicant.blocklisted/operator', 'applicant.blocklist_removed/operator']),
    );
  });

  it('blocklisting a deactivated applicant rejects it at once; activate brings it back rejected, never approved', async () => {
    const sandboxKey = await h.admin<Credential>('post', `/products/${productId}/keys`, {
      environment: 'sandbox',
    });
    const created = await h
      .http()
      .post('/v1/applicants')
      .set(h.auth(sandboxKey))
      .send({ externalUserId: 'u-off-block' })
      .expect(201);
    const id = created.body.id as string;
    await h
      .http()
      .post('/v1/applicants/u-off-block/sandbox/review')
      .set(h.auth(sandboxKey))
      .send({ reviewAnswer: 'GREEN' })
      .expect(200);
    expect(await status('u-off-block')).toMatchObject({ status: 'approved', reviewAnswer: 'GREEN' });
    await act('u-off-block', 'deactivate').expect(200);
    const blocked = await act('u-off-block', 'blocklist', { reason: 'Fraud ring' }).expect(200);
    // Still deactivated, but the verdict is the blocklist's, and the partner hears it now.
    expect(blocked.body.applicant).toMatchObject({
      status: 'deactivated',
      reviewAnswer: 'RED',
      reviewRejectType: 'FINAL',
      rejectLabels: ['BLOCKLIST'],
      moderationComment: 'Fraud ring',
      attempt: 2,
    });
    const reviewed = await outbox(id, 'applicantReviewed');
    expect(reviewed).toHaveLength(2);
    expect(reviewed[1].data).toMatchObject({
      reviewResult: { reviewAnswer: 'RED', reviewRejectType: 'FINAL', rejectLabels: ['BLOCKLIST'] },
    });
    expect(await history('u-off-block')).toEqual(
      expect.arrayContaining(['applicant.blocklisted/operator', 'applicant.rejected/operator']),
    );
    const on = await act('u-off-block', 'activate').expect(200);
    expect(on.body.applicant).toMatchObject({
      status: 'rejected',
      reviewAnswer: 'RED',
      rejectLabels: ['BLOCKLIST'],
    });
    await act('u-off-block', 'unblock').expect(200);
    expect(await status('u-off-block')).toMatchObject({ status: 'rejected', reviewRejectType: 'FINAL' });
    expect(await outbox(id, 'applicantReviewed')).toHaveLength(2);
  });

  it('answers 400 for an unknown action or body, 404 for an unknown applicant or product', async () => {
    await applicant('u-misc');
    expect((await act('u-misc', 'explode').expect(400)).body.message).toMatch(/action/);
    await act('u-misc', 'reset', { reason: 5 }).expect(400);
    await act('nobody', 'reset').expect(404);
    await h
      .http()
      .post('/admin/v1/products/00000000-0000-4000-8000-000000000000/applicants/u-misc/reset')
      .set(bearer)
      .expect(404);
    await h.http().post(`/admin/v1/products/${productId}/applicants/u-misc/reset`).expect(401);
  });
});
