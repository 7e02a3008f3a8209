import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { applicantReviewedData } from '@tessera/contracts';
import { TEST_ADMIN_TOKEN, until } from '@tessera/testing';
import { JobQueues } from '@tessera/platform';
import { type Credential, type Harness, startHarness } from './harness';
import { startChecksWorker, submitSteps } from './checks-support';

let h: Harness;
let worker: NestFastifyApplication;
let productId: string;
let key: Credential;

const bearer = { authorization: `Bearer ${TEST_ADMIN_TOKEN}` };

beforeAll(async () => {
  h = await startHarness();
  worker = await startChecksWorker(h);
  ({ productId, key } = await h.tenant());
  await h.admin('post', `/products/${productId}/levels`, {
    name: 'AML_KYC',
    applicantType: 'individual',
    isDefault: true,
    personalInfoRequiredFields: ['firstName', 'lastName', 'dateOfBirth'],
    steps: [{ kind: 'personal_information' }, { kind: 'aml' }],
  });
  await h.admin('post', `/products/${productId}/levels`, {
    name: 'KYB_AML',
    applicantType: 'company',
    isDefault: true,
    companyRequiredFields: ['companyName'],
    steps: [{ kind: 'company_data' }, { kind: 'adverse_media' }],
  });
}, 60000);
afterAll(async () => {
  await worker?.close();
  await h?.close();
});

/** An applicant with an open enrollment on its default level. */
async function applicant(body: Record<string, unknown>) {
  const created = await h.http().post('/v1/applicants').set(h.auth(key)).send(body).expect(201);
  const session = await h
    .http()
    .post(`/v1/applicants/${body.externalUserId as string}/verifications`)
    .set(h.auth(key))
    .expect(202);
  return { id: created.body.id as string, enrollmentId: session.body.enrollmentId as string };
}

type StepView = {
  kind: string;
  reviewStatus: string;
  reviewAnswer: string | null;
  reviewRejectType: string | null;
};
const steps = async (externalUserId: string) =>
  (await h.http().get(`/v1/applicants/${externalUserId}/steps`).set(h.auth(key)).expect(200)).body
    .steps as StepView[];
const settled = (list: StepView[]) =>
  list.every((s) => ['completed', 'awaitingOperatorReview', 'expired'].includes(s.reviewStatus));
const status = async (externalUserId: string) =>
  (await h.http().get(`/v1/applicants/${externalUserId}/status`).set(h.auth(key)).expect(200)).body;
const history = async (externalUserId: string) =>
  (
    (await h.http().get(`/v1/applicants/${externalUserId}/review-history`).set(h.auth(key)).expect(200)).body
      .items as { eventType: string; actorType: string }[]
  ).map((i) => i.eventType);
const outbox = (applicantId: string, eventType: string) =>
  h.sql<{ data: Record<string, unknown> }>(
    `SELECT data FROM outbox WHERE entity_id = $1 AND event_type = $2 ORDER BY created_at`,
    [applicantId, eventType],
  );
const checkResult = async (applicantId: string, kind: string) =>
  (
    await h.sql<{ check_result: Record<string, unknown> }>(
      'SELECT check_result FROM applicant_steps WHERE applicant_id = $1 AND kind = $2',
      [applicantId, kind],
    )
  )[0].check_result;

describe('step checks in the worker', () => {
  it('an ordinary name passes AML screening: both steps GREEN, approved, low risk, applicantReviewed', async () => {
    const a = await applicant({
      externalUserId: 'u-ordinary',
      firstName: 'Emma',
      lastName: 'Lindqvist',
      dateOfBirth: '1988-04-12',
    });
    await submitSteps(h, a, ['personal_information', 'aml']);
    const result = await until(() => steps('u-ordinary'), settled);
    expect(result).toEqual([
      expect.objectContaining({
        kind: 'personal_information',
        reviewStatus: 'completed',
        reviewAnswer: 'GREEN',
      }),
      expect.objectContaining({ kind: 'aml', reviewStatus: 'completed', reviewAnswer: 'GREEN' }),
    ]);
    expect(await status('u-ordinary')).toMatchObject({
      status: 'approved',
      reviewAnswer: 'GREEN',
      riskLevel: 'low',
      attempt: 1,
      reviewedAtUtc: expect.any(String),
    });
    expect(await history('u-ordinary')).toEqual(
      expect.arrayContaining(['aml.run', 'enrollment.completed', 'applicant.approved']),
    );
    const [event] = await outbox(a.id, 'applicantReviewed');
    expect(applicantReviewedData.safeParse(event.data).success).toBe(true);
    expect(event.data).toMatchObject({ reviewResult: { reviewAnswer: 'GREEN' }, sandbox: false });
  });

  it('catches AL ZAWAHIRI, Dr. Ayman written "Ayman Al-Zawahiri" with his date of birth: RED FINAL SANCTIONS', async () => {
    const a = await applicant({
      externalUserId: 'u-listed',
      firstName: 'Ayman',
      lastName: 'Al-Zawahiri',
      dateOfBirth: '1951-06-19',
    });
    await submitSteps(h, a, ['personal_information', 'aml']);
    const [, aml] = await until(() => steps('u-listed'), settled);
    expect(aml).toMatchObject({
      kind: 'aml',
      reviewStatus: 'completed',
      reviewAnswer: 'RED',
      reviewRejectType: 'FINAL',
    });
    expect(await status('u-listed')).toMatchObject({
      status: 'rejected',
      reviewAnswer: 'RED',
      reviewRejectType: 'FINAL',
      rejectLabels: ['SANCTIONS'],
      riskLevel: 'high',
    });
    expect(await checkResult(a.id, 'aml')).toMatchObject({
      outcome: 'hit',
      matches: [
        expect.objectContaining({ listId: 2676, listName: 'AL ZAWAHIRI, Dr. Ayman', dateOfBirth: 'agrees' }),
      ],
    });
    const [event] = await outbox(a.id, 'applicantReviewed');
    expect(event.data).toMatchObject({
      reviewResult: { reviewAnswer: 'RED', reviewRejectType: 'FINAL', rejectLabels: ['SANCTIONS'] },
    });
  });

  it('catches BANCO NACIONAL DE CUBA (entity) on the adverse_media step of a company', async () => {
    const a = await applicant({
      externalUserId: 'c-bank',
      type: 'company',
      companyName: 'Banco Nacional de Cuba',
    });
    await submitSteps(h, a, ['company_data', 'adverse_media']);
    const [data, media] = await until(() => steps('c-bank'), settled);
    expect(data).toMatchObject({ reviewStatus: 'completed', reviewAnswer: 'GREEN' });
    expect(media).toMatchObject({
      reviewStatus: 'completed',
      reviewAnswer: 'RED',
      reviewRejectType: 'FINAL',
    });
    expect(await status('c-bank')).toMatchObject({ status: 'rejected', rejectLabels: ['ADVERSE_MEDIA'] });
    expect(await checkResult(a.id, 'adverse_media')).toMatchObject({
      matches: expect.arrayContaining([expect.objectContaining({ listId: 306, type: 'entity', score: 100 })]),
    });
    expect(await history('c-bank')).toContain('adverse_media.run');
  });

  it("a company's checks that finish while its UBO child is open hold its verdict; the child's checks complete it", async () => {
    const a = await applicant({
      externalUserId: 'c-owned',
      type: 'company',
      companyName: 'Lindqvist Trading',
    });
    await h
      .http()
      .post('/v1/applicants/c-owned/ubos')
      .set(h.auth(key))
      .send({ fullName: 'Emma Lindqvist', dateOfBirth: '1988-04-12', ownershipPercent: 100, roles: ['ubo'] })
      .expect(201);
    const spawned = await h
      .http()
      .post('/v1/applicants/c-owned/ubos/0/spawn-kyc')
      .set(h.auth(key))
      .expect(201);
    await submitSteps(h, a, ['company_data', 'adverse_media']);
    const own = await until(() => steps('c-owned'), settled);
    expect(own.map((s) => s.reviewAnswer)).toEqual(['GREEN', 'GREEN']);
    expect(await status('c-owned')).toMatchObject({
      status: 'awaiting_user',
      reviewAnswer: null,
      attempt: 0,
    });
    expect(await outbox(a.id, 'applicantReviewed')).toHaveLength(0);
    expect(await history('c-owned')).not.toContain('applicant.approved');

    const childId = spawned.body.childApplicantId as string;
    const [enrollment] = await h.sql<{ id: string }>('SELECT id FROM enrollments WHERE applicant_id = $1', [
      childId,
    ]);
    await submitSteps(h, { id: childId, enrollmentId: enrollment.id }, ['personal_information', 'aml']);
    await until(
      () => status('c-owned'),
      (s) => s.status === 'approved',
    );
    expect(await status(spawned.body.childExternalUserId as string)).toMatchObject({ status: 'approved' });
    expect(await outbox(a.id, 'applicantReviewed')).toHaveLength(1);
    expect(await outbox(a.id, 'companyChildrenCompleted')).toHaveLength(1);
  });

  it('personal information missing a required field is RED RETRY with REQUIRED_DATA_MISSING', async () => {
    const a = await applicant({ externalUserId: 'u-nodob', firstName: 'Lars', lastName: 'Hansen' });
    await submitSteps(h, a, ['personal_information', 'aml']);
    const [info] = await until(() => steps('u-nodob'), settled);
    expect(info).toMatchObject({ reviewAnswer: 'RED', reviewRejectType: 'RETRY' });
    expect(await status('u-nodob')).toMatchObject({
      status: 'rejected',
      rejectLabels: ['REQUIRED_DATA_MISSING'],
    });
  });

  it('questionnaire: every required answer is GREEN; a missing one is RED RETRY QUESTIONNAIRE_INCOMPLETE', async () => {
    await h.admin('post', `/products/${productId}/questionnaires`, {
      id: 'source-of-funds',
      title: 'Source of funds',
      questions: [
        { id: 'occupation', text: 'Occupation', type: 'text', required: true },
        { id: 'pep', text: 'Are you a politically exposed person?', type: 'boolean', required: true },
        { id: 'notes', text: 'Anything else?', type: 'text', required: false },
      ],
    });
    await h.admin('post', `/products/${productId}/levels`, {
      name: 'QUIZ_KYC',
      applicantType: 'individual',
      steps: [{ kind: 'questionnaire' }],
      attachedQuestionnaireId: 'source-of-funds',
    });
    /** Answers through the SDK API, then submits the step as the SDK's final submit leaves it. */
    const answered = async (externalUserId: string, answers: Record<string, unknown>) => {
      const created = await h
        .http()
        .post('/v1/applicants')
        .set(h.auth(key))
        .send({ externalUserId, verificationLevelName: 'QUIZ_KYC' })
        .expect(201);
      const session = await h
        .http()
        .post(`/v1/applicants/${externalUserId}/verifications`)
        .set(h.auth(key))
        .expect(202);
      const link = await h.http().get(`/api/v1/sdk/links/${session.body.shortCode}`).expect(200);
      await h
        .http()
        .post('/api/v1/sdk/questionnaire')
        .set('authorization', `Bearer ${link.body.token}`)
        .send({ answers })
        .expect(200);
      await submitSteps(h, { id: created.body.id, enrollmentId: session.body.enrollmentId }, [
        'questionnaire',
      ]);
    };
    await answered('u-quiz-ok', { occupation: 'Engineer', pep: false });
    await answered('u-quiz-gap', { occupation: 'Engineer' });
    const [ok] = await until(() => steps('u-quiz-ok'), settled);
    expect(ok).toMatchObject({ kind: 'questionnaire', reviewAnswer: 'GREEN' });
    const [gap] = await until(() => steps('u-quiz-gap'), settled);
    expect(gap).toMatchObject({ kind: 'questionnaire', reviewAnswer: 'RED', reviewRejectType: 'RETRY' });
    expect(await status('u-quiz-gap')).toMatchObject({
      status: 'rejected',
      rejectLabels: ['QUESTIONNAIRE_INCOMPLETE'],
    });
  });

  it('a near miss waits for an operator (on hold, matches kept); RETRY reopens the step on the next link', async () => {
    const a = await applicant({
      externalUserId: 'u-near',
      firstName: 'Ayman Mohammed',
      lastName: 'Al Zawahiri',
      dateOfBirth: '1990-01-01',
    });
    // Remove the date of birth the partner gave: the partial name match has nothing to contradict it.
    await h.sql(`UPDATE applicants SET info = info - 'dateOfBirth' WHERE id = $1`, [a.id]);
    await h.admin('patch', `/products/${productId}/levels/AML_KYC`, {
      personalInfoRequiredFields: ['firstName', 'lastName'],
    });
    await submitSteps(h, a, ['personal_information', 'aml']);
    const [, aml] = await until(() => steps('u-near'), settled);
    expect(aml).toMatchObject({ reviewStatus: 'awaitingOperatorReview', reviewAnswer: null });
    expect(await status('u-near')).toMatchObject({ status: 'in_review', riskLevel: 'medium' });
    expect(await history('u-near')).toContain('applicant.sent_to_review');
    expect(await outbox(a.id, 'applicantOnHold')).toHaveLength(1);
    // The operator sees the listed entry the name came close to.
    const view = await h
      .http()
      .get(`/admin/v1/products/${productId}/applicants/u-near/steps`)
      .set(bearer)
      .expect(200);
    expect(view.body.steps[1]).toMatchObject({
      kind: 'aml',
      reviewStatus: 'awaitingOperatorReview',
      checkResult: {
        outcome: 'possible_match',
        matches: [
          expect.objectContaining({
            listId: 2676,
            listName: 'AL ZAWAHIRI, Dr. Ayman',
            screenedName: 'Ayman Mohammed Al Zawahiri',
            programs: ['SDGT'],
          }),
        ],
      },
    });
    expect(await checkResult(a.id, 'aml')).toMatchObject({
      outcome: 'possible_match',
      matches: [expect.objectContaining({ listId: 2676, basis: 'partial_name' })],
    });

    await h
      .http()
      .post(`/admin/v1/products/${productId}/applicants/u-near/steps/aml/review`)
      .set(bearer)
      .send({ reviewAnswer: 'RED', reviewRejectType: 'RETRY', rejectLabels: ['SANCTIONS'] })
      .expect(200);
    expect(await status('u-near')).toMatchObject({ status: 'rejected', reviewRejectType: 'RETRY' });
    expect(await outbox(a.id, 'applicantReviewed')).toHaveLength(1);

    await h.http().post('/v1/applicants/u-near/verifications').set(h.auth(key)).expect(202);
    const reopened = await steps('u-near');
    expect(reopened[1]).toMatchObject({ kind: 'aml', reviewStatus: 'pending', reviewAnswer: null });
    expect(reopened[0]).toMatchObject({ kind: 'personal_information', reviewStatus: 'completed' });
    expect(await status('u-near')).toMatchObject({ status: 'init' });
    await h.admin('patch', `/products/${productId}/levels/AML_KYC`, {
      personalInfoRequiredFields: ['firstName', 'lastName', 'dateOfBirth'],
    });
  });

  it('a FINAL rejection is not reopened by a new link', async () => {
    await h.http().post('/v1/applicants/u-listed/verifications').set(h.auth(key)).expect(202);
    const [, aml] = await steps('u-listed');
    expect(aml).toMatchObject({ reviewStatus: 'completed', reviewAnswer: 'RED', reviewRejectType: 'FINAL' });
    expect(await status('u-listed')).toMatchObject({ status: 'rejected' });
  });

  it('a redelivered check job changes nothing: one result, one aml.run, one applicantReviewed', async () => {
    const a = await applicant({
      externalUserId: 'u-twice',
      firstName: 'Sophie',
      lastName: 'Moreau',
      dateOfBirth: '1979-09-30',
    });
    await submitSteps(h, a, ['personal_information', 'aml']);
    await until(() => steps('u-twice'), settled);
    const [step] = await h.sql<{ id: string }>(
      `SELECT id FROM applicant_steps WHERE applicant_id = $1 AND kind = 'aml'`,
      [a.id],
    );
    const queues = worker.get(JobQueues);
    await queues.add(
      'VERIFICATION_STEP_CHECK',
      { stepId: step.id, applicantId: a.id, kind: 'aml', submittedAt: new Date().toISOString() },
      { jobId: `redelivery-${step.id}` },
    );
    const queue = queues.queue('verification.checks');
    await until(
      () => queue.getJobState(`redelivery-${step.id}`),
      (state) => state === 'completed',
    );
    expect((await history('u-twice')).filter((e) => e === 'aml.run')).toHaveLength(1);
    expect(await outbox(a.id, 'applicantReviewed')).toHaveLength(1);
  });

  it('an expired link expires the steps that are not completed and records enrollment.expired', async () => {
    const a = await applicant({
      externalUserId: 'u-late',
      firstName: 'Mei',
      lastName: 'Tanaka',
      dateOfBirth: '1990-02-02',
    });
    await h.sql(`UPDATE enrollments SET expires_at = now() - interval '1 second' WHERE id = $1`, [
      a.enrollmentId,
    ]);
    const expired = await until(
      () => steps('u-late'),
      (list) => list.every((s) => s.reviewStatus === 'expired'),
    );
    expect(expired.map((s) => s.kind)).toEqual(['personal_information', 'aml']);
    expect(await history('u-late')).toContain('enrollment.expired');
    expect(await status('u-late')).toMatchObject({ status: 'expired' });
    // A new link opens the expired steps again.
    await h.http().post('/v1/applicants/u-late/verifications').set(h.auth(key)).expect(202);
    expect((await steps('u-late')).map((s) => s.reviewStatus)).toEqual(['pending', 'pending']);
  });

  describe('checks that finish after the operator froze the applicant (decision 0435)', () => {
    /** Steps submitted on the applicant's (now failed) enrollment, as queued checks left them. */
    const queued = (a: { id: string; enrollmentId: string }) =>
      h.sql(
        `INSERT INTO applicant_steps (applicant_id, enrollment_id, kind, review_status)
         SELECT $1, $2, kind, 'submitted' FROM unnest(ARRAY['personal_information', 'aml']) kind`,
        [a.id, a.enrollmentId],
      );
    const act = (externalUserId: string, action: string) =>
      h
        .http()
        .post(`/admin/v1/products/${productId}/applicants/${externalUserId}/${action}`)
        .set(bearer)
        .send({ reason: 'Fraud ring' })
        .expect(200);

    it("a blocklisted applicant keeps the blocklist's RED FINAL: its steps are recorded, no second verdict", async () => {
      const a = await applicant({
        externalUserId: 'u-blocked',
        firstName: 'Lena',
        lastName: 'Berg',
        dateOfBirth: '1985-05-05',
      });
      await act('u-blocked', 'blocklist');
      await queued(a);
      const done = await until(() => steps('u-blocked'), settled);
      expect(done.map((s) => s.reviewAnswer)).toEqual(['GREEN', 'GREEN']);
      expect(await status('u-blocked')).toMatchObject({
        status: 'rejected',
        reviewAnswer: 'RED',
        reviewRejectType: 'FINAL',
        rejectLabels: ['BLOCKLIST'],
        attempt: 1,
      });
      expect(await outbox(a.id, 'applicantReviewed')).toHaveLength(1);
    });

    it('a deactivated applicant stays deactivated; an operator step decision answers 409', async () => {
      const a = await applicant({
        externalUserId: 'u-frozen',
        firstName: 'Omar',
        lastName: 'Haddad',
        dateOfBirth: '1991-07-07',
      });
      await act('u-frozen', 'deactivate');
      await queued(a);
      await until(() => steps('u-frozen'), settled);
      expect(await status('u-frozen')).toMatchObject({
        status: 'deactivated',
        reviewAnswer: null,
        attempt: 0,
      });
      expect(await outbox(a.id, 'applicantReviewed')).toHaveLength(0);
      await h.sql(
        `UPDATE applicant_steps SET review_status = 'awaitingOperatorReview' WHERE applicant_id = $1 AND kind = 'aml'`,
        [a.id],
      );
      const refused = await h
        .http()
        .post(`/admin/v1/products/${productId}/applicants/u-frozen/steps/aml/review`)
        .set(bearer)
        .send({ reviewAnswer: 'GREEN' })
        .expect(409);
      expect(refused.body).toEqual({ message: 'Applicant is deactivated; activate it first' });
    });

    it('steps that finished while it was deactivated give the verdict on activate', async () => {
      const a = await applicant({
        externalUserId: 'u-thawed',
        firstName: 'Ines',
        lastName: 'Duarte',
        dateOfBirth: '1988-08-08',
      });
      await act('u-thawed', 'deactivate');
      await queued(a);
      await until(() => steps('u-thawed'), settled);
      expect(await status('u-thawed')).toMatchObject({ status: 'deactivated', reviewAnswer: null });
      const activated = await h
        .http()
        .post(`/admin/v1/products/${productId}/applicants/u-thawed/activate`)
        .set(bearer)
        .expect(200);
      expect(activated.body.applicant).toMatchObject({
        status: 'approved',
        reviewAnswer: 'GREEN',
        attempt: 1,
      });
      const reviewed = await outbox(a.id, 'applicantReviewed');
      expect(reviewed).toHaveLength(1);
      expect(applicantReviewedData.parse(reviewed[0].data)).toMatchObject({
        reviewResult: { reviewAnswer: 'GREEN' },
      });
      // The partner hears the activation before the verdict it led to.
      const order = await h.sql<{ event_type: string }>(
        `SELECT event_type FROM outbox WHERE entity_id = $1 AND event_type IN ('applicantActivated', 'applicantReviewed')
          ORDER BY sequence`,
        [a.id],
      );
      expect(order.map((row) => row.event_type)).toEqual(['applicantActivated', 'applicantReviewed']);
    });
  });
});
