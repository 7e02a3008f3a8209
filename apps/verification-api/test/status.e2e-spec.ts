import { type Credential, type Harness, INDIVIDUAL_LEVEL, startHarness } from './harness';

let h: Harness;
let key: Credential;
let applicantId: string;
let createdAtUtc: string;

beforeAll(async () => {
  h = await startHarness();
  const t = await h.tenant();
  key = t.key;
  await h.admin('post', `/products/${t.productId}/levels`, INDIVIDUAL_LEVEL);
  const res = await h
    .http()
    .post('/v1/applicants')
    .set(h.auth(key))
    .send({ externalUserId: 'u1' })
    .expect(201);
  applicantId = res.body.id;
  createdAtUtc = res.body.createdAtUtc;
  await h
    .http()
    .post('/v1/applicants')
    .set(h.auth(key))
    .send({ externalUserId: 'co', type: 'company' })
    .expect(201);
});
afterAll(() => h?.close());

describe('GET .../status', () => {
  it('returns the DECISIONS shape', async () => {
    const res = await h.http().get('/v1/applicants/u1/status').set(h.auth(key)).expect(200);
    expect(res.body).toEqual({
      externalUserId: 'u1',
      applicantId,
      levelName: 'BASIC_KYC',
      status: 'init',
      reviewAnswer: null,
      reviewRejectType: null,
      rejectLabels: [],
      moderationComment: null,
      riskLevel: 'unknown',
      attempt: 0,
      createdAtUtc,
      reviewedAtUtc: null,
    });
  });

  it('404 {message} for an unknown applicant', async () => {
    const res = await h.http().get('/v1/applicants/nobody/status').set(h.auth(key)).expect(404);
    expect(res.body).toEqual({ message: 'Applicant not found' });
  });
});

describe('GET .../steps', () => {
  it('one entry per required step of the level (optional steps left out), pending until progress exists', async () => {
    const res = await h.http().get('/v1/applicants/u1/steps').set(h.auth(key)).expect(200);
    const pending = (kind: string) => ({
      kind,
      optional: false,
      reviewAnswer: null,
      reviewStatus: 'pending',
      reviewRejectType: null,
      lastUpdatedAtUtc: createdAtUtc,
    });
    expect(res.body).toEqual({
      externalUserId: 'u1',
      levelId: expect.any(String),
      levelName: 'BASIC_KYC',
      steps: [pending('personal_information'), pending('identity_doc'), pending('selfie')],
    });
  });

  it('reflects stored step progress in the Step result vocabulary', async () => {
    await h.sql(
      `INSERT INTO applicant_steps (applicant_id, kind, review_status, review_answer, review_reject_type, updated_at)
       VALUES ($1, 'identity_doc', 'completed', 'RED', 'RETRY', '2026-01-02T03:04:05Z')`,
      [applicantId],
    );
    const res = await h.http().get('/v1/applicants/u1/steps').set(h.auth(key)).expect(200);
    expect(res.body.steps[1]).toEqual({
      kind: 'identity_doc',
      optional: false,
      reviewAnswer: 'RED',
      reviewStatus: 'completed',
      reviewRejectType: 'RETRY',
      lastUpdatedAtUtc: '2026-01-02T03:04:05.000Z',
    });
  });

  it('an optional step stays out of the list even once it has progress', async () => {
    await h.sql(
      `INSERT INTO applicant_steps (applicant_id, kind, review_status, review_answer)
       VALUES ($1, 'aml', 'completed', 'GREEN')`,
      [applicantId],
    );
    const res = await h.http().get('/v1/applicants/u1/steps').set(h.auth(key)).expect(200);
    expect(res.body.steps.map((s: { kind: string }) => s.kind)).toEqual([
      'personal_information',
      'identity_doc',
      'selfie',
    ]);
    expect(res.body.steps.every((s: { optional: boolean }) => s.optional === false)).toBe(true);
  });

  it('an applicant without a level has no steps', async () => {
    const res = await h.http().get('/v1/applicants/co/steps').set(h.auth(key)).expect(200);
    expect(res.body).toEqual({ externalUserId: 'co', levelId: null, levelName: null, steps: [] });
  });
});

describe('GET .../review-history', () => {
  beforeAll(async () => {
    const insert = (type: string, actor: string, at: string) =>
      h.sql(
        `INSERT INTO review_events (applicant_id, product_id, event_type, actor_type, at)
         SELECT id, product_id, $2, $3, $4 FROM applicants WHERE id = $1`,
        [applicantId, type, actor, at],
      );
    await insert('admin.key_rotated', 'operator', '2099-01-01T00:00:00Z');
    await insert('level.updated', 'operator', '2099-01-01T00:00:01Z');
    await insert('enrollment.submitted', 'sdk', '2099-01-02T00:00:00Z');
    await insert('applicant.approved', 'system', '2099-01-03T00:00:00Z');
  });

  it('lists partner-visible events oldest first; administrative events are never returned', async () => {
    const res = await h.http().get('/v1/applicants/u1/review-history').set(h.auth(key)).expect(200);
    expect(res.body).toEqual({
      items: [
        { atUtc: expect.any(String), eventType: 'applicant.created', actorType: 'partner' },
        { atUtc: '2099-01-02T00:00:00.000Z', eventType: 'enrollment.submitted', actorType: 'sdk' },
        { atUtc: '2099-01-03T00:00:00.000Z', eventType: 'applicant.approved', actorType: 'system' },
      ],
      totalItems: 3,
    });
  });

  it('filters by since, eventType and limit (totalItems counts every match)', async () => {
    const since = await h
      .http()
      .get('/v1/applicants/u1/review-history?since=2099-01-02T00:00:00Z')
      .set(h.auth(key))
      .expect(200);
    expect(since.body.items.map((i: { eventType: string }) => i.eventType)).toEqual([
      'enrollment.submitted',
      'applicant.approved',
    ]);
    const byType = await h
      .http()
      .get('/v1/applicants/u1/review-history?eventType=applicant.approved')
      .set(h.auth(key))
      .expect(200);
    expect(byType.body.totalItems).toBe(1);
    const limited = await h
      .http()
      .get('/v1/applicants/u1/review-history?limit=1')
      .set(h.auth(key))
      .expect(200);
    expect(limited.body.items).toHaveLength(1);
    expect(limited.body.totalItems).toBe(3);
    await h.http().get('/v1/applicants/u1/review-history?limit=200').set(h.auth(key)).expect(200);
  });

  it.each([
    ['limit=0'],
    ['limit=201'],
    ['limit=abc'],
    ['limit=1.5'],
    ['limit=1e2'],
    ['limit=0x10'],
    ['limit=%201'],
  ])('400 {message} for %s', async (q) => {
    const res = await h.http().get(`/v1/applicants/u1/review-history?${q}`).set(h.auth(key)).expect(400);
    expect(res.body).toEqual({ message: 'limit: must be an integer from 1 to 200' });
  });

  it('400 {message} for an eventType outside the partner-visible list (administrative included)', async () => {
    for (const type of ['admin.key_rotated', 'nope']) {
      const res = await h
        .http()
        .get(`/v1/applicants/u1/review-history?eventType=${type}`)
        .set(h.auth(key))
        .expect(400);
      expect(res.body).toEqual({ message: 'eventType: is not a partner-visible event' });
    }
  });

  // The contract's "ISO 8601" (decision 0474): a date alone, or a date-time without an offset, is UTC.
  it.each([
    ['2099-01-02'],
    ['2099-01-02T00:00:00'],
    ['2099-01-02T02:00:00%2B02:00'],
    ['2099-01-02T00:00:00.000Z'],
  ])('since=%s is the same moment as 2099-01-02T00:00:00Z', async (since) => {
    const res = await h
      .http()
      .get(`/v1/applicants/u1/review-history?since=${since}`)
      .set(h.auth(key))
      .expect(200);
    expect(res.body.items.map((i: { eventType: string }) => i.eventType)).toEqual([
      'enrollment.submitted',
      'applicant.approved',
    ]);
  });

  it('400 {message} for a since that is not ISO 8601', async () => {
    const res = await h
      .http()
      .get('/v1/applicants/u1/review-history?since=yesterday')
      .set(h.auth(key))
      .expect(400);
    expect(res.body).toEqual({ message: 'since: must be an ISO 8601 date or timestamp' });
  });
});
