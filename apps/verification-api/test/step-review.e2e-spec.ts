import { applicantReviewedData } from '@tessera/contracts';
import { TEST_ADMIN_TOKEN } from '@tessera/testing';
import { runCli } from '../src/cli/run';
import { type Credential, type Harness, INDIVIDUAL_LEVEL, startHarness } from './harness';

let h: Harness;
let productId: string;
let key: Credential;
let sandboxKey: Credential;

const bearer = { authorization: `Bearer ${TEST_ADMIN_TOKEN}` };
const TS = expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);

beforeAll(async () => {
  h = await startHarness();
  ({ productId, key } = await h.tenant());
  sandboxKey = await h.admin<Credential>('post', `/products/${productId}/keys`, { environment: 'sandbox' });
  // personal_information, identity_doc, selfie required; aml optional.
  await h.admin('post', `/products/${productId}/levels`, INDIVIDUAL_LEVEL);
});
afterAll(() => h?.close());

/** An applicant on BASIC_KYC with an open enrollment; returns its id and the enrollment id. */
async function applicant(externalUserId: string, credential = key) {
  const created = await h
    .http()
    .post('/v1/applicants')
    .set(h.auth(credential))
    .send({ externalUserId })
    .expect(201);
  const session = await h
    .http()
    .post(`/v1/applicants/${externalUserId}/verification-sessions?verificationLevelName=BASIC_KYC`)
    .set(h.auth(credential))
    .expect(202);
  return { id: created.body.id as string, enrollmentId: session.body.enrollmentId as string };
}

/** Stores step progress as the SDK and the checks would leave it. */
async function setStep(
  a: { id: string; enrollmentId: string },
  kind: string,
  status: string,
  answer: string | null = null,
) {
  await h.sql(
    `INSERT INTO applicant_steps (applicant_id, enrollment_id, kind, review_status, review_answer)
     VALUES ($1, $2, $3, $4, $5)
     ON CONFLICT (applicant_id, kind) DO UPDATE SET review_status = excluded.review_status,
       review_answer = excluded.review_answer`,
    [a.id, a.enrollmentId, kind, status, answer],
  );
}

const review = (externalUserId: string, kind: string, body: unknown, product = productId) =>
  h
    .http()
    .post(`/admin/v1/products/${product}/applicants/${externalUserId}/steps/${kind}/review`)
    .set(bearer)
    .send(body as object);

const outboxOf = (applicantId: string, eventType: string) =>
  h.sql<{ tenant_id: string; entity_type: string; entity_id: string; data: Record<string, unknown> }>(
    'SELECT tenant_id, entity_type, entity_id, data FROM outbox WHERE entity_id = $1 AND event_type = $2',
    [applicantId, eventType],
  );

const eventsOf = (applicantId: string) =>
  h.sql<{ event_type: string; actor_type: string; data: Record<string, unknown> }>(
    `SELECT event_type, actor_type, data FROM review_events
      WHERE applicant_id = $1 AND event_type <> 'applicant.created' ORDER BY at, id`,
    [applicantId],
  );

describe('operator step review: success', () => {
  let a: { id: string; enrollmentId: string };

  beforeAll(async () => {
    a = await applicant('u-green');
    await setStep(a, 'personal_information', 'completed', 'GREEN');
    await setStep(a, 'identity_doc', 'awaitingOperatorReview');
    await setStep(a, 'selfie', 'in_review');
    await setStep(a, 'aml', 'awaitingOperatorReview');
  });

  it('decides a step awaiting operator review; the review stays open while a required step is not completed', async () => {
    const res = await review('u-green', 'identity_doc', {
      reviewAnswer: 'GREEN',
      moderationComment: 'Document checked by hand',
      clientComment: 'Glare on the photo, readable',
    }).expect(200);
    expect(res.body).toEqual({
      step: {
        kind: 'identity_doc',
        optional: false,
        reviewAnswer: 'GREEN',
        reviewStatus: 'completed',
        reviewRejectType: null,
        rejectLabels: [],
        moderationComment: 'Document checked by hand',
        clientComment: 'Glare on the photo, readable',
        lastUpdatedAtUtc: TS,
      },
      reviewCompleted: false,
      applicant: expect.objectContaining({ applicantId: a.id, status: 'init', reviewAnswer: null }),
    });
    const steps = await h.http().get('/v1/applicants/u-green/steps').set(h.auth(key)).expect(200);
    expect(steps.body.steps[1]).toMatchObject({
      kind: 'identity_doc',
      reviewStatus: 'completed',
      reviewAnswer: 'GREEN',
    });
    expect(await outboxOf(a.id, 'applicantReviewed')).toEqual([]);
  });

  it('decides an optional step without completing the review', async () => {
    const res = await review('u-green', 'aml', { reviewAnswer: 'GREEN' }).expect(200);
    expect(res.body.step).toMatchObject({ kind: 'aml', optional: true, reviewStatus: 'completed' });
    expect(res.body.reviewCompleted).toBe(false);
  });

  it('the decision on the last required step (in_review) completes the review: approved', async () => {
    const res = await review('u-green', 'selfie', {
      reviewAnswer: 'GREEN',
      moderationComment: 'Live match',
    }).expect(200);
    expect(res.body.reviewCompleted).toBe(true);
    const status = await h.http().get('/v1/applicants/u-green/status').set(h.auth(key)).expect(200);
    expect(status.body).toEqual({
      externalUserId: 'u-green',
      applicantId: a.id,
      levelName: 'BASIC_KYC',
      status: 'approved',
      reviewAnswer: 'GREEN',
      reviewRejectType: null,
      rejectLabels: [],
      moderationComment: 'Document checked by hand\nLive match',
      riskLevel: 'unknown',
      attempt: 1,
      createdAtUtc: TS,
      reviewedAtUtc: TS,
    });
    expect(res.body.applicant).toEqual(status.body);
    const history = await h.http().get('/v1/applicants/u-green/review-history').set(h.auth(key)).expect(200);
    expect(
      history.body.items.map((i: { eventType: string; actorType: string }) => [i.eventType, i.actorType]),
    ).toEqual([
      ['applicant.created', 'partner'],
      ['enrollment.created', 'partner'],
      ['enrollment.completed', 'operator'],
      ['applicant.approved', 'operator'],
    ]);
    const [enrollment] = await h.sql<{ status: string; completed_at: Date | null }>(
      'SELECT status, completed_at FROM enrollments WHERE id = $1',
      [a.enrollmentId],
    );
    expect(enrollment.status).toBe('completed');
    expect(enrollment.completed_at).not.toBeNull();
  });

  it('writes the step results, the review events and the applicantReviewed outbox row together', async () => {
    const events = await eventsOf(a.id);
    expect(events.map((e) => e.event_type)).toEqual([
      'enrollment.created',
      'step.reviewed',
      'step.reviewed',
      'step.reviewed',
      'enrollment.completed',
      'applicant.approved',
    ]);
    expect(events[1]).toEqual({
      event_type: 'step.reviewed',
      actor_type: 'operator',
      data: {
        kind: 'identity_doc',
        enrollmentId: a.enrollmentId,
        previousStatus: 'awaitingOperatorReview',
        reviewAnswer: 'GREEN',
        reviewRejectType: null,
        rejectLabels: [],
        moderationComment: 'Document checked by hand',
        clientComment: 'Glare on the photo, readable',
      },
    });
    const [status] = await h.sql<{ reviewed_at: Date }>('SELECT reviewed_at FROM applicants WHERE id = $1', [
      a.id,
    ]);
    const outbox = await outboxOf(a.id, 'applicantReviewed');
    expect(outbox).toHaveLength(1);
    expect(outbox[0]).toMatchObject({ tenant_id: productId, entity_type: 'applicant', entity_id: a.id });
    const step = (kind: string) => ({
      kind,
      optional: false,
      reviewAnswer: 'GREEN',
      reviewStatus: 'completed',
      reviewRejectType: null,
      lastUpdatedAtUtc: TS,
    });
    expect(outbox[0].data).toEqual({
      applicantId: a.id,
      externalUserId: 'u-green',
      levelName: 'BASIC_KYC',
      reviewStatus: 'completed',
      reviewResult: {
        reviewAnswer: 'GREEN',
        reviewRejectType: null,
        rejectLabels: [],
        moderationComment: 'Document checked by hand\nLive match',
      },
      steps: [step('personal_information'), step('identity_doc'), step('selfie')],
      sandbox: false,
      createdAtUtc: new Date(status.reviewed_at).toISOString(),
    });
    expect(applicantReviewedData.safeParse(outbox[0].data).success).toBe(true);
  });

  it('a RED decision rejects the applicant with the labels, the strongest reject type and the RED comments', async () => {
    const b = await applicant('u-red', sandboxKey);
    await setStep(b, 'personal_information', 'completed', 'GREEN');
    await setStep(b, 'identity_doc', 'awaitingOperatorReview');
    await setStep(b, 'selfie', 'awaitingOperatorReview');
    await review('u-red', 'identity_doc', {
      reviewAnswer: 'RED',
      reviewRejectType: 'RETRY',
      rejectLabels: ['BAD_QUALITY', 'BAD_QUALITY'],
      moderationComment: 'Photo too blurry',
    }).expect(200);
    const last = await review('u-red', 'selfie', {
      reviewAnswer: 'RED',
      reviewRejectType: 'FINAL',
      rejectLabels: ['FRAUDULENT_PATTERNS'],
      moderationComment: 'Face does not match the document',
    }).expect(200);
    expect(last.body.step).toMatchObject({ reviewAnswer: 'RED', reviewRejectType: 'FINAL' });
    expect(last.body.applicant).toMatchObject({
      status: 'rejected',
      reviewAnswer: 'RED',
      reviewRejectType: 'FINAL',
      rejectLabels: ['BAD_QUALITY', 'FRAUDULENT_PATTERNS'],
      moderationComment: 'Photo too blurry\nFace does not match the document',
      reviewedAtUtc: TS,
    });
    const history = await h
      .http()
      .get('/v1/applicants/u-red/review-history?eventType=applicant.rejected')
      .set(h.auth(key))
      .expect(200);
    expect(history.body.totalItems).toBe(1);
    const [outbox] = await outboxOf(b.id, 'applicantReviewed');
    expect(outbox.data).toMatchObject({
      reviewResult: {
        reviewAnswer: 'RED',
        reviewRejectType: 'FINAL',
        rejectLabels: ['BAD_QUALITY', 'FRAUDULENT_PATTERNS'],
        moderationComment: 'Photo too blurry\nFace does not match the document',
      },
      // Created through a sandbox credential.
      sandbox: true,
    });
    const [enrollment] = await h.sql<{ status: string }>('SELECT status FROM enrollments WHERE id = $1', [
      b.enrollmentId,
    ]);
    expect(enrollment.status).toBe('rejected');
  });

  it('concurrent decisions on the last two required steps complete the review exactly once', async () => {
    const c = await applicant('u-race');
    await setStep(c, 'personal_information', 'completed', 'GREEN');
    await setStep(c, 'identity_doc', 'awaitingOperatorReview');
    await setStep(c, 'selfie', 'awaitingOperatorReview');
    const [first, second] = await Promise.all([
      review('u-race', 'identity_doc', { reviewAnswer: 'GREEN' }),
      review('u-race', 'selfie', { reviewAnswer: 'GREEN' }),
    ]);
    expect([first.status, second.status]).toEqual([200, 200]);
    expect([first.body.reviewCompleted, second.body.reviewCompleted].sort()).toEqual([false, true]);
    expect(await outboxOf(c.id, 'applicantReviewed')).toHaveLength(1);
  });
});

describe('operator step review: errors', () => {
  let a: { id: string; enrollmentId: string };

  beforeAll(async () => {
    a = await applicant('u-err');
    await setStep(a, 'identity_doc', 'awaitingOperatorReview');
    await setStep(a, 'selfie', 'submitted');
    await setStep(a, 'personal_information', 'expired');
  });

  it('404 {message} for an unknown product (or a product id that is not a UUID)', async () => {
    for (const product of ['00000000-0000-4000-8000-000000000000', 'not-a-uuid']) {
      const res = await review('u-err', 'identity_doc', { reviewAnswer: 'GREEN' }, product).expect(404);
      expect(res.body).toEqual({ message: 'Product not found' });
    }
  });

  it('404 {message} for an unknown applicant, including one of another product', async () => {
    const other = await h.tenant('Other');
    await h
      .http()
      .post('/v1/applicants')
      .set(h.auth(other.key))
      .send({ externalUserId: 'elsewhere' })
      .expect(201);
    for (const externalUserId of ['nobody', 'elsewhere']) {
      const res = await review(externalUserId, 'identity_doc', { reviewAnswer: 'GREEN' }).expect(404);
      expect(res.body).toEqual({ message: 'Applicant not found' });
    }
  });

  it('404 {message} for a step kind the applicant level does not list', async () => {
    for (const kind of ['poa', 'no_such_kind']) {
      const res = await review('u-err', kind, { reviewAnswer: 'GREEN' }).expect(404);
      expect(res.body).toEqual({ message: `Step ${kind} is not in the applicant's level` });
    }
  });

  it.each([
    [{}, 'reviewAnswer: must be GREEN or RED'],
    [{ reviewAnswer: 'YELLOW' }, 'reviewAnswer: must be GREEN or RED'],
    [{ reviewAnswer: 'RED' }, 'reviewRejectType: is required when reviewAnswer is RED'],
    [{ reviewAnswer: 'RED', reviewRejectType: 'EXPIRED' }, 'reviewRejectType: must be RETRY or FINAL'],
    [
      { reviewAnswer: 'GREEN', reviewRejectType: 'FINAL' },
      'reviewRejectType: applies only when reviewAnswer is RED',
    ],
    [{ reviewAnswer: 'GREEN', rejectLabels: ['X'] }, 'rejectLabels: applies only when reviewAnswer is RED'],
    [
      { reviewAnswer: 'RED', reviewRejectType: 'RETRY', rejectLabels: 'X' },
      'rejectLabels: must be an array of strings',
    ],
    [{ reviewAnswer: 'GREEN', moderationComment: '  ' }, 'moderationComment: must not be empty'],
    [{ reviewAnswer: 'GREEN', verdict: 'ok' }, 'Unrecognized key: "verdict"'],
  ])('400 {message} for the body %j', async (body, message) => {
    const res = await review('u-err', 'identity_doc', body).expect(400);
    expect(res.body).toEqual({ message });
  });

  it('400 {message} for a body that is not a JSON object', async () => {
    const res = await review('u-err', 'identity_doc', ['GREEN']).expect(400);
    expect(Object.keys(res.body)).toEqual(['message']);
  });

  it('409 {message} for a step that is pending, submitted, expired or already completed, writing nothing', async () => {
    const cases: [string, string][] = [
      ['aml', 'pending'],
      ['selfie', 'submitted'],
      ['personal_information', 'expired'],
    ];
    for (const [kind, state] of cases) {
      const res = await review('u-err', kind, { reviewAnswer: 'GREEN' }).expect(409);
      expect(res.body).toEqual({
        message: `Step ${kind} is ${state}; only a step that is awaitingOperatorReview or in_review takes a decision`,
      });
    }
    await review('u-err', 'identity_doc', { reviewAnswer: 'RED', reviewRejectType: 'RETRY' }).expect(200);
    const again = await review('u-err', 'identity_doc', { reviewAnswer: 'GREEN' }).expect(409);
    expect(again.body.message).toMatch(/^Step identity_doc is completed;/);
    const [step] = await h.sql<{ review_answer: string }>(
      "SELECT review_answer FROM applicant_steps WHERE applicant_id = $1 AND kind = 'identity_doc'",
      [a.id],
    );
    expect(step.review_answer).toBe('RED');
    expect((await eventsOf(a.id)).filter((e) => e.event_type === 'step.reviewed')).toHaveLength(1);
  });

  it('401 without the operator token', async () => {
    await h
      .http()
      .post(`/admin/v1/products/${productId}/applicants/u-err/steps/identity_doc/review`)
      .send({ reviewAnswer: 'GREEN' })
      .expect(401);
  });
});

describe('operator step review: UBO child roll-up', () => {
  it('the last spawned child to complete closes the parent: awaiting_user -> pending, companyChildrenCompleted', async () => {
    const parent = await h
      .http()
      .post('/v1/applicants')
      .set(h.auth(key))
      .send({ externalUserId: 'co-parent', type: 'company' })
      .expect(201);
    await h.sql("UPDATE applicants SET status = 'awaiting_user' WHERE id = $1", [parent.body.id]);
    const children = [await applicant('ubo-1'), await applicant('ubo-2')];
    for (const [index, child] of children.entries()) {
      await h.sql('UPDATE applicants SET parent_applicant_id = $2 WHERE id = $1', [child.id, parent.body.id]);
      await h.sql(
        `INSERT INTO ubos (parent_applicant_id, ubo_index, full_name, roles, linked_applicant_id)
         VALUES ($1, $2, $3, '["ubo"]', $4)`,
        [parent.body.id, index, `Owner ${index}`, child.id],
      );
      await setStep(child, 'personal_information', 'completed', 'GREEN');
      await setStep(child, 'identity_doc', 'completed', 'GREEN');
      await setStep(child, 'selfie', 'awaitingOperatorReview');
    }
    await review('ubo-1', 'selfie', { reviewAnswer: 'GREEN' }).expect(200);
    expect(await outboxOf(parent.body.id, 'companyChildrenCompleted')).toEqual([]);
    await review('ubo-2', 'selfie', { reviewAnswer: 'RED', reviewRejectType: 'FINAL' }).expect(200);
    const rollUp = await outboxOf(parent.body.id, 'companyChildrenCompleted');
    expect(rollUp).toHaveLength(1);
    expect(rollUp[0].data).toEqual({
      applicantId: parent.body.id,
      externalUserId: 'co-parent',
      levelName: null,
      sandbox: false,
      createdAtUtc: TS,
    });
    const structure = await h
      .http()
      .get('/v1/applicants/co-parent/company-structure')
      .set(h.auth(key))
      .expect(200);
    expect(structure.body).toMatchObject({
      allChildrenComplete: true,
      counts: { completed: 1, rejected: 1 },
    });
    const [row] = await h.sql<{ status: string }>('SELECT status FROM applicants WHERE id = $1', [
      parent.body.id,
    ]);
    expect(row.status).toBe('pending');
  });
});

describe('operator CLI review-step', () => {
  it('records the decision and prints the same JSON as the API; errors exit 1 with {message, status}', async () => {
    const a = await applicant('u-cli');
    await setStep(a, 'identity_doc', 'awaitingOperatorReview');
    const cli = (...argv: string[]) => runCli(argv, h.env.env);
    const ok = await cli(
      'review-step',
      '--product',
      productId,
      '--applicant',
      'u-cli',
      '--step',
      'identity_doc',
      '--json',
      '{"reviewAnswer":"RED","reviewRejectType":"RETRY","rejectLabels":["UNSATISFACTORY_PHOTOS"]}',
    );
    expect(ok).toEqual({
      code: 0,
      output: {
        step: expect.objectContaining({
          kind: 'identity_doc',
          reviewStatus: 'completed',
          reviewAnswer: 'RED',
          reviewRejectType: 'RETRY',
          rejectLabels: ['UNSATISFACTORY_PHOTOS'],
        }),
        reviewCompleted: false,
        applicant: expect.objectContaining({ externalUserId: 'u-cli', status: 'init' }),
      },
    });
    const steps = await h.http().get('/v1/applicants/u-cli/steps').set(h.auth(key)).expect(200);
    expect(steps.body.steps[1]).toMatchObject({ reviewAnswer: 'RED', reviewRejectType: 'RETRY' });
    expect(
      await cli(
        'review-step',
        '--product',
        productId,
        '--applicant',
        'u-cli',
        '--step',
        'identity_doc',
        '--json',
        '{"reviewAnswer":"GREEN"}',
      ),
    ).toEqual({
      code: 1,
      output: {
        message:
          'Step identity_doc is completed; only a step that is awaitingOperatorReview or in_review takes a decision',
        status: 409,
      },
    });
    expect(
      await cli(
        'review-step',
        '--product',
        productId,
        '--applicant',
        'u-cli',
        '--step',
        'selfie',
        '--json',
        '{}',
      ),
    ).toEqual({
      code: 1,
      output: expect.objectContaining({ message: 'reviewAnswer: must be GREEN or RED', status: 400 }),
    });
  });
});
