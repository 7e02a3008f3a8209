import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { TEST_ADMIN_TOKEN, until } from '@tessera/testing';
import { Client } from 'pg';
import { LevelsService } from '../src/modules/levels/levels.service';
import { ReviewsService } from '../src/modules/reviews/reviews.service';
import { startChecksWorker } from './checks-support';
import { type Credential, type Harness, startHarness } from './harness';

/**
 * One link at a time writes to an applicant, a submission with nothing left to check keeps the verdict, a
 * changed name is screened again, and SDK writes re-check their session under the applicant's lock
 * (decision 0441). The real worker runs the checks.
 */
let h: Harness;
let worker: NestFastifyApplication;
let productId: string;
let key: Credential;

beforeAll(async () => {
  h = await startHarness();
  worker = await startChecksWorker(h);
  ({ productId, key } = await h.tenant());
  await h.admin('post', `/products/${productId}/levels`, {
    name: 'AML_KYC',
    applicantType: 'individual',
    isDefault: true,
    personalInfoFields: ['firstName', 'lastName', 'dateOfBirth', 'email'],
    personalInfoRequiredFields: ['firstName', 'lastName', 'dateOfBirth'],
    steps: [{ kind: 'personal_information' }, { kind: 'aml' }],
  });
  await h.admin('post', `/products/${productId}/levels`, {
    name: 'KYB_SCREEN',
    applicantType: 'company',
    isDefault: true,
    steps: [{ kind: 'adverse_media' }],
  });
}, 60000);
afterAll(async () => {
  await worker?.close();
  await h?.close();
});

const api = () => h.http();
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

async function create(externalUserId: string): Promise<string> {
  const created = await api().post('/v1/applicants').set(h.auth(key)).send({ externalUserId }).expect(201);
  return created.body.id as string;
}

/** A fresh link for the applicant: its short code, enrollment and SDK token. */
async function link(externalUserId: string) {
  const minted = await api()
    .post(`/v1/applicants/${externalUserId}/verification-sessions?verificationLevelName=AML_KYC`)
    .set(h.auth(key))
    .expect(202);
  const shortCode = minted.body.shortCode as string;
  const resolved = await api().get(`/api/v1/sdk/links/${shortCode}`).expect(200);
  return {
    shortCode,
    enrollmentId: minted.body.enrollmentId as string,
    token: resolved.body.token as string,
  };
}

const personalInfo = (token: string, body: Record<string, string>) =>
  api().post('/api/v1/sdk/personal-info').set(bearer(token)).send(body);

/** The user's whole session: identity values, the step, the final submit. */
async function complete(token: string, body: Record<string, string>) {
  await personalInfo(token, body).expect(200);
  await api().post('/api/v1/sdk/steps/personal_information/submit').set(bearer(token)).expect(200);
  await api().post('/api/v1/sdk/submit').set(bearer(token)).expect(202);
}

const status = async (externalUserId: string) =>
  (await api().get(`/v1/applicants/${externalUserId}/status`).set(h.auth(key)).expect(200)).body as {
    status: string;
    reviewAnswer: string | null;
    reviewRejectType: string | null;
    rejectLabels: string[];
  };
const steps = async (externalUserId: string) =>
  (
    (await api().get(`/v1/applicants/${externalUserId}/steps`).set(h.auth(key)).expect(200)).body.steps as {
      kind: string;
      reviewStatus: string;
      reviewAnswer: string | null;
    }[]
  ).map((s) => `${s.kind}:${s.reviewStatus}:${s.reviewAnswer ?? '-'}`);
const reviewed = (externalUserId: string) =>
  until(
    () => status(externalUserId),
    (s) => ['approved', 'rejected'].includes(s.status),
  );
const outboxCount = async (applicantId: string, eventType: string) =>
  (await h.sql('SELECT 1 FROM outbox WHERE entity_id = $1 AND event_type = $2', [applicantId, eventType]))
    .length;

const ORDINARY = { firstName: 'Emma', lastName: 'Lindqvist', dateOfBirth: '1988-04-12' };
const LISTED = { firstName: 'Ayman', lastName: 'Al-Zawahiri', dateOfBirth: '1951-06-19' };

describe('one link at a time', () => {
  it('a new link replaces the open one: 410 on resolve, 401 for its token; what it submitted is checked now', async () => {
    await create('one-link');
    const first = await link('one-link');
    await personalInfo(first.token, ORDINARY).expect(200);
    await api().post('/api/v1/sdk/steps/personal_information/submit').set(bearer(first.token)).expect(200);
    // Held while its enrollment is open (the user may still change it) ...
    await new Promise((r) => setTimeout(r, 600));
    expect(await steps('one-link')).toContain('personal_information:submitted:-');

    const second = await link('one-link');
    const [replaced] = await h.sql<{ status: string }>('SELECT status FROM enrollments WHERE id = $1', [
      first.enrollmentId,
    ]);
    expect(replaced.status).toBe('replaced');
    const resolve = await api().get(`/api/v1/sdk/links/${first.shortCode}`).expect(410);
    expect(resolve.body.message).toMatch(/replaced/i);
    await api().get('/api/v1/sdk/session').set(bearer(first.token)).expect(401);
    await personalInfo(first.token, { lastName: 'Other' }).expect(401);
    // ... and checked once the link that held it is replaced, not when the enrollment expires.
    await until(
      () => steps('one-link'),
      (list) => list.includes('personal_information:completed:GREEN'),
    );
    await api().get('/api/v1/sdk/session').set(bearer(second.token)).expect(200);
    await api().post('/api/v1/sdk/submit').set(bearer(second.token)).expect(202);
    expect(await reviewed('one-link')).toMatchObject({ status: 'approved', reviewAnswer: 'GREEN' });
  });

  it('a link minted after the verdict with nothing left to check: submit keeps the verdict, no applicantPending', async () => {
    const id = await create('after-verdict');
    await complete((await link('after-verdict')).token, ORDINARY);
    expect(await reviewed('after-verdict')).toMatchObject({ status: 'approved' });
    const pendingBefore = await outboxCount(id, 'applicantPending');

    const again = await link('after-verdict');
    const submitted = await api().post('/api/v1/sdk/submit').set(bearer(again.token)).expect(202);
    expect(submitted.body.enrollmentStatus).toBe('completed');
    await new Promise((r) => setTimeout(r, 600));
    expect(await status('after-verdict')).toMatchObject({ status: 'approved', reviewAnswer: 'GREEN' });
    expect(await outboxCount(id, 'applicantPending')).toBe(pendingBefore);
  });

  it('an operator reset closes the open link: 410 on resolve, 401 for its token (not the success screen)', async () => {
    await create('reset-link');
    const open = await link('reset-link');
    await api()
      .post(`/admin/v1/products/${productId}/applicants/reset-link/reset`)
      .set({ authorization: `Bearer ${TEST_ADMIN_TOKEN}` })
      .send({})
      .expect(200);
    const resolve = await api().get(`/api/v1/sdk/links/${open.shortCode}`).expect(410);
    expect(resolve.body.message).toMatch(/closed/i);
    await api().get('/api/v1/sdk/session').set(bearer(open.token)).expect(401);
  });

  it("a company's lapsed link does not expire it while a UBO child is open: it waits for the child, not the user", async () => {
    await api()
      .post('/v1/applicants')
      .set(h.auth(key))
      .send({ externalUserId: 'waiting-co', type: 'company', companyName: 'Acme' })
      .expect(201);
    await api()
      .post('/v1/applicants/waiting-co/ubos')
      .set(h.auth(key))
      .send({ fullName: 'Ann Owner', dateOfBirth: '1970-01-01', ownershipPercent: 60, roles: ['ubo'] })
      .expect(201);
    await api().post('/v1/applicants/waiting-co/ubos/0/spawn-kyc').set(h.auth(key)).expect(201);
    const minted = await api()
      .post('/v1/applicants/waiting-co/verification-sessions?verificationLevelName=KYB_SCREEN')
      .set(h.auth(key))
      .expect(202);
    await h.sql(`UPDATE enrollments SET expires_at = now() - interval '1 second' WHERE id = $1`, [
      minted.body.enrollmentId,
    ]);
    await until(
      async () =>
        (
          await h.sql<{ status: string }>('SELECT status FROM enrollments WHERE id = $1', [
            minted.body.enrollmentId,
          ])
        )[0].status,
      (s) => s === 'expired',
    );
    expect((await status('waiting-co')).status).toBe('awaiting_user');
  });

  it("a newer link's expiry leaves the steps an earlier submission put before the operator", async () => {
    const id = await create('held-aml');
    const first = await link('held-aml');
    // The first session's screening found a possible match: the operator has it.
    await h.sql(
      `INSERT INTO applicant_steps (applicant_id, enrollment_id, kind, review_status, review_answer)
       VALUES ($1, $2, 'personal_information', 'completed', 'GREEN'),
              ($1, $2, 'aml', 'awaitingOperatorReview', NULL)`,
      [id, first.enrollmentId],
    );
    await h.sql(`UPDATE enrollments SET status = 'submitted' WHERE id = $1`, [first.enrollmentId]);
    await h.sql(`UPDATE applicants SET status = 'in_review' WHERE id = $1`, [id]);
    const second = await link('held-aml');
    await h.sql(`UPDATE enrollments SET expires_at = now() - interval '1 second' WHERE id = $1`, [
      second.enrollmentId,
    ]);
    await until(
      async () =>
        (
          await h.sql<{ status: string }>('SELECT status FROM enrollments WHERE id = $1', [
            second.enrollmentId,
          ])
        )[0].status,
      (s) => s === 'expired',
    );
    expect(await steps('held-aml')).toEqual([
      'personal_information:completed:GREEN',
      'aml:awaitingOperatorReview:-',
    ]);
    await api()
      .post(`/admin/v1/products/${productId}/applicants/held-aml/steps/aml/review`)
      .set({ authorization: `Bearer ${TEST_ADMIN_TOKEN}` })
      .send({ reviewAnswer: 'GREEN' })
      .expect(200);
    expect(await status('held-aml')).toMatchObject({ status: 'approved' });
  });
});

describe('a changed identity is screened again', () => {
  it('the user changes the name on a new link after a GREEN screening: the new name is screened (RED FINAL)', async () => {
    await create('renamed');
    await complete((await link('renamed')).token, ORDINARY);
    expect(await reviewed('renamed')).toMatchObject({ status: 'approved' });

    const again = await link('renamed');
    await personalInfo(again.token, LISTED).expect(200);
    expect(await steps('renamed')).toContain('aml:pending:-');
    await api().post('/api/v1/sdk/submit').set(bearer(again.token)).expect(202);
    const result = await until(
      () => status('renamed'),
      (s) => s.status === 'rejected',
    );
    expect(result).toMatchObject({
      reviewAnswer: 'RED',
      reviewRejectType: 'FINAL',
      rejectLabels: ['SANCTIONS'],
    });
  });

  it("the partner's PATCH of a screened field reopens the screening; other fields do not", async () => {
    await create('patched');
    await complete((await link('patched')).token, ORDINARY);
    expect(await reviewed('patched')).toMatchObject({ status: 'approved' });
    await api()
      .patch('/v1/applicants/patched/personal-info')
      .set(h.auth(key))
      .send({ email: 'emma@example.com' })
      .expect(200);
    expect(await steps('patched')).toContain('aml:completed:GREEN');
    await api()
      .patch('/v1/applicants/patched/personal-info')
      .set(h.auth(key))
      .send({ lastName: 'Lindqvist-Berg' })
      .expect(200);
    expect(await steps('patched')).toContain('aml:pending:-');
    // The next submission screens the new name.
    await api()
      .post('/api/v1/sdk/submit')
      .set(bearer((await link('patched')).token))
      .expect(202);
    await until(
      () => steps('patched'),
      (list) => list.includes('aml:completed:GREEN'),
    );
  });
});

describe('a check writes only onto the submission it read', () => {
  it('a slow check of an earlier submission finds the step submitted again on a newer link: stale, nothing written', async () => {
    const id = await create('slow-check');
    const first = await link('slow-check');
    const second = await link('slow-check');
    // The step went back to the user (RETRY) and was submitted again on the newer link; its new check runs.
    const [step] = await h.sql<{ id: string }>(
      `INSERT INTO applicant_steps (applicant_id, enrollment_id, kind, review_status)
       VALUES ($1, $2, 'personal_information', 'in_review') RETURNING id`,
      [id, second.enrollmentId],
    );
    const reviews = worker.get(ReviewsService);
    const [level] = await h.sql<{ id: string }>(`SELECT id FROM levels WHERE name = 'AML_KYC'`);
    const levelEntity = (await worker.get(LevelsService).findById(level.id))!;
    const result = {
      decision: 'GREEN' as const,
      rejectLabels: [],
      moderationComment: null,
      details: { check: 'identity_data' },
      risk: 'low' as const,
      historyEvent: 'step.checked',
    };
    const late = await reviews.recordCheck({
      stepId: step.id,
      applicantId: id,
      enrollmentId: first.enrollmentId,
      level: levelEntity,
      result,
    });
    expect(late).toBe('stale');
    expect(await steps('slow-check')).toContain('personal_information:in_review:-');
    const current = await reviews.recordCheck({
      stepId: step.id,
      applicantId: id,
      enrollmentId: second.enrollmentId,
      level: levelEntity,
      result,
    });
    expect(current).toBe('recorded');
    expect(await steps('slow-check')).toContain('personal_information:completed:GREEN');
  });
});

describe('SDK writes re-check their session under the lock', () => {
  it('a write that waited on the applicant while the enrollment was submitted is refused with 409, nothing saved', async () => {
    const id = await create('late-write');
    const session = await link('late-write');
    const blocker = new Client({ connectionString: h.env.db.url, options: '-c search_path=verification' });
    await blocker.connect();
    try {
      await blocker.query('BEGIN');
      await blocker.query('SELECT 1 FROM applicants WHERE id = $1 FOR UPDATE', [id]);
      const write = personalInfo(session.token, ORDINARY).then((r) => r);
      await new Promise((r) => setTimeout(r, 500));
      await blocker.query(`UPDATE enrollments SET status = 'submitted' WHERE id = $1`, [
        session.enrollmentId,
      ]);
      await blocker.query('COMMIT');
      const answer = await write;
      expect(answer.status).toBe(409);
      expect(answer.body.message).toMatch(/already submitted/);
    } finally {
      await blocker.end();
    }
    const [row] = await h.sql<{ info: Record<string, unknown> }>(
      'SELECT info FROM applicants WHERE id = $1',
      [id],
    );
    expect(row.info.lastName).toBeUndefined();
  });
});
