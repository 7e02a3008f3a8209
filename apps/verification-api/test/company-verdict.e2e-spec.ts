import { TEST_ADMIN_TOKEN } from '@tessera/testing';
import { COMPANY_LEVEL, type Credential, type Harness, INDIVIDUAL_LEVEL, startHarness } from './harness';

/**
 * A company's own verdict and its spawned UBO children (decision 0443): the company stays `awaiting_user`
 * while a live child is open, its verdict waits for the round to close and takes the children into account.
 */
let h: Harness;
let productId: string;
let sandboxKey: Credential;

beforeAll(async () => {
  h = await startHarness();
  ({ productId } = await h.tenant());
  sandboxKey = await h.admin<Credential>('post', `/products/${productId}/keys`, { environment: 'sandbox' });
  await h.admin('post', `/products/${productId}/levels`, INDIVIDUAL_LEVEL);
  await h.admin('post', `/products/${productId}/levels`, COMPANY_LEVEL);
  // A company level whose only step takes no input from the user: the SDK's final submit needs nothing else.
  await h.admin('post', `/products/${productId}/levels`, {
    name: 'KYB_SCREEN',
    applicantType: 'company',
    steps: [{ kind: 'adverse_media' }],
  });
}, 60_000);
afterAll(() => h?.close());

const api = () => h.http();
const auth = () => h.auth(sandboxKey);

async function company(externalUserId: string, verificationLevelName = 'KYB_FULL'): Promise<string> {
  const created = await api()
    .post('/v1/applicants')
    .set(auth())
    .send({ externalUserId, type: 'company', verificationLevelName, companyName: 'Acme' })
    .expect(201);
  return created.body.id as string;
}

/** Appends a UBO row and spawns its child; answers the child's externalUserId. */
async function owner(parent: string, fullName: string): Promise<string> {
  const row = await api()
    .post(`/v1/applicants/${parent}/ubos`)
    .set(auth())
    .send({ fullName, dateOfBirth: '1970-01-01', ownershipPercent: 50, roles: ['ubo'] })
    .expect(201);
  const spawned = await api()
    .post(`/v1/applicants/${parent}/ubos/${row.body.uboIndex as number}/spawn-kyc`)
    .set(auth())
    .expect(201);
  return spawned.body.childExternalUserId as string;
}

const review = (externalUserId: string, body: Record<string, unknown>) =>
  api().post(`/v1/applicants/${externalUserId}/sandbox/review`).set(auth()).send(body).expect(200);
const green = (externalUserId: string) => review(externalUserId, { reviewAnswer: 'GREEN' });
const status = async (externalUserId: string) =>
  (await api().get(`/v1/applicants/${externalUserId}/status`).set(auth()).expect(200)).body;
const act = (externalUserId: string, action: string) =>
  api()
    .post(`/admin/v1/products/${productId}/applicants/${externalUserId}/${action}`)
    .set({ authorization: `Bearer ${TEST_ADMIN_TOKEN}` })
    .send({})
    .expect(200);
/** The parent's roll-up and verdict events, in the order the partner receives them. */
const verdictEvents = async (applicantId: string) =>
  (
    await h.sql<{ event_type: string }>(
      `SELECT event_type FROM outbox
        WHERE entity_id = $1 AND event_type IN ('applicantReviewed', 'companyChildrenCompleted')
        ORDER BY sequence`,
      [applicantId],
    )
  ).map((row) => row.event_type);

describe('a company with open UBO children (decision 0443)', () => {
  it('holds its verdict while a child is open; a child rejected FINAL makes it RED FINAL', async () => {
    const id = await company('hold-red');
    const child = await owner('hold-red', 'Ann Owner');
    expect((await status('hold-red')).status).toBe('awaiting_user');

    // The company's own steps are decided, but its child has not started: the verdict waits.
    const held = await green('hold-red');
    expect(held.body).toMatchObject({ status: 'awaiting_user', reviewAnswer: null, attempt: 0 });
    expect(held.body.steps.map((s: { reviewStatus: string }) => s.reviewStatus)).toEqual([
      'completed',
      'completed',
    ]);
    expect(await verdictEvents(id)).toEqual([]);

    await review(child, { reviewAnswer: 'RED', reviewRejectType: 'FINAL', rejectLabels: ['FORGERY'] });
    expect(await status('hold-red')).toMatchObject({
      status: 'rejected',
      reviewAnswer: 'RED',
      reviewRejectType: 'FINAL',
      rejectLabels: ['UBO_REJECTED'],
      attempt: 1,
    });
    expect(await verdictEvents(id)).toEqual(['companyChildrenCompleted', 'applicantReviewed']);
  });

  it('completes GREEN when the last child is approved', async () => {
    const id = await company('hold-green');
    const [first, second] = [await owner('hold-green', 'Ann Owner'), await owner('hold-green', 'Ben Holder')];
    await green('hold-green');
    await green(first);
    expect((await status('hold-green')).status).toBe('awaiting_user');
    await green(second);
    expect(await status('hold-green')).toMatchObject({
      status: 'approved',
      reviewAnswer: 'GREEN',
      attempt: 1,
    });
    expect(await verdictEvents(id)).toEqual(['companyChildrenCompleted', 'applicantReviewed']);
  });

  it('reviewed after its children closed, a rejected child still makes it RED (RETRY from a RETRY child)', async () => {
    await company('late-review');
    const child = await owner('late-review', 'Ann Owner');
    await review(child, { reviewAnswer: 'RED', rejectLabels: ['LOW_QUALITY'] });
    expect((await status('late-review')).status).toBe('pending');
    const reviewed = await green('late-review');
    expect(reviewed.body).toMatchObject({
      status: 'rejected',
      reviewAnswer: 'RED',
      reviewRejectType: 'RETRY',
      rejectLabels: ['UBO_REJECTED'],
    });
  });

  it("an operator's decision on the company's last step while a child is open holds the verdict", async () => {
    const id = await company('hold-operator');
    const child = await owner('hold-operator', 'Ann Owner');
    await h.sql(
      `INSERT INTO applicant_steps (applicant_id, kind, review_status, review_answer)
       VALUES ($1, 'company_data', 'completed', 'GREEN'), ($1, 'company_documents', 'awaitingOperatorReview', NULL)`,
      [id],
    );
    const decided = await api()
      .post(`/admin/v1/products/${productId}/applicants/hold-operator/steps/company_documents/review`)
      .set({ authorization: `Bearer ${TEST_ADMIN_TOKEN}` })
      .send({ reviewAnswer: 'GREEN' })
      .expect(200);
    expect(decided.body).toMatchObject({ reviewCompleted: false, applicant: { status: 'awaiting_user' } });
    await green(child);
    expect(await status('hold-operator')).toMatchObject({ status: 'approved', attempt: 1 });
  });

  it('a company step waiting for an operator when the round closes puts it on hold: in_review, applicantOnHold', async () => {
    const id = await company('hold-queue');
    const child = await owner('hold-queue', 'Ann Owner');
    await h.sql(
      `INSERT INTO applicant_steps (applicant_id, kind, review_status, review_answer)
       VALUES ($1, 'company_data', 'completed', 'GREEN'), ($1, 'company_documents', 'awaitingOperatorReview', NULL)`,
      [id],
    );
    await green(child);
    expect((await status('hold-queue')).status).toBe('in_review');
    const onHold = await h.sql(
      "SELECT 1 FROM outbox WHERE entity_id = $1 AND event_type = 'applicantOnHold'",
      [id],
    );
    expect(onHold).toHaveLength(1);
    await api()
      .post(`/admin/v1/products/${productId}/applicants/hold-queue/steps/company_documents/review`)
      .set({ authorization: `Bearer ${TEST_ADMIN_TOKEN}` })
      .send({ reviewAnswer: 'GREEN' })
      .expect(200);
    expect((await status('hold-queue')).status).toBe('approved');
  });

  it('a reset of a company with an open child leaves it awaiting_user', async () => {
    await company('reset-open');
    await owner('reset-open', 'Ann Owner');
    await act('reset-open', 'reset');
    expect((await status('reset-open')).status).toBe('awaiting_user');
  });

  it("the SDK's final submit of the company keeps it awaiting_user while a child is open", async () => {
    await company('submit-open', 'KYB_SCREEN');
    await owner('submit-open', 'Ann Owner');
    const link = await api().post('/v1/applicants/submit-open/verifications').set(auth()).expect(202);
    const { token } = (
      await api()
        .get(`/api/v1/sdk/links/${link.body.shortCode as string}`)
        .expect(200)
    ).body;
    await api()
      .post('/api/v1/sdk/submit')
      .set({ authorization: `Bearer ${token as string}` })
      .expect(202);
    expect((await status('submit-open')).status).toBe('awaiting_user');
  });

  it('spawning a child on an approved company reopens it; its verdict is computed again when the round closes', async () => {
    const id = await company('reopened');
    await green('reopened');
    expect((await status('reopened')).status).toBe('approved');
    const child = await owner('reopened', 'Ann Owner');
    expect((await status('reopened')).status).toBe('awaiting_user');
    await review(child, { reviewAnswer: 'RED', reviewRejectType: 'FINAL', rejectLabels: ['SANCTIONS'] });
    expect(await status('reopened')).toMatchObject({
      status: 'rejected',
      reviewRejectType: 'FINAL',
      rejectLabels: ['UBO_REJECTED'],
      attempt: 2,
    });
    expect(await verdictEvents(id)).toEqual([
      'applicantReviewed',
      'companyChildrenCompleted',
      'applicantReviewed',
    ]);
  });

  // Every call that mints the child a link reopens it, and the company's round with it (SessionsRepository.openIn).
  it.each([
    ['regenerate-link', (co: string) => api().post(`/v1/applicants/${co}/ubos/0/regenerate-link`).send({})],
    ['a spawn-kyc repeat', (co: string) => api().post(`/v1/applicants/${co}/ubos/0/spawn-kyc`).send({})],
    ["the child's own link", (co: string) => api().post(`/v1/applicants/${co}-ubo-0/verifications`)],
  ])(
    "a RETRY child's new link by %s reopens the company's round; the child approved then approves it",
    async (how, mint) => {
      const co = `retry-round-${how.replace(/\W+/g, '-')}`;
      const id = await company(co);
      const child = await owner(co, 'Ann Owner');
      await green(co);
      await review(child, { reviewAnswer: 'RED', rejectLabels: ['LOW_QUALITY'] });
      expect(await status(co)).toMatchObject({ status: 'rejected', reviewRejectType: 'RETRY' });
      expect((await mint(co).set(auth())).status).toBeLessThan(300);
      expect((await status(child)).status).toBe('init');
      expect((await status(co)).status).toBe('awaiting_user');
      await green(child);
      expect(await status(co)).toMatchObject({
        status: 'approved',
        reviewAnswer: 'GREEN',
        attempt: 2,
      });
      expect(await verdictEvents(id)).toEqual([
        'companyChildrenCompleted',
        'applicantReviewed',
        'companyChildrenCompleted',
        'applicantReviewed',
      ]);
    },
  );

  it('a verdict held for a child reset after its round closed completes when that child finishes again', async () => {
    const id = await company('reset-child');
    const child = await owner('reset-child', 'Ann Owner');
    await green(child);
    expect((await status('reset-child')).status).toBe('pending');
    await act(child, 'reset');
    expect((await green('reset-child')).body).toMatchObject({ status: 'awaiting_user', reviewAnswer: null });
    await green(child);
    expect(await status('reset-child')).toMatchObject({ status: 'approved', attempt: 1 });
    // The round closed once: the child's reset (an operator's) does not open another.
    expect(await verdictEvents(id)).toEqual(['companyChildrenCompleted', 'applicantReviewed']);
  });

  it('a company blocklisted with an open child is rejected at once and stays so when the child finishes', async () => {
    const id = await company('blocked-co');
    const child = await owner('blocked-co', 'Ann Owner');
    await green('blocked-co');
    await act('blocked-co', 'blocklist');
    expect(await status('blocked-co')).toMatchObject({ status: 'rejected', rejectLabels: ['BLOCKLIST'] });
    await green(child);
    expect(await status('blocked-co')).toMatchObject({ status: 'rejected', rejectLabels: ['BLOCKLIST'] });
    expect(await verdictEvents(id)).toEqual(['applicantReviewed', 'companyChildrenCompleted']);
  });

  it("an approved company's approved owner blocklisted: the round closes again and the company is RED FINAL", async () => {
    const id = await company('block-owner');
    const child = await owner('block-owner', 'Ann Owner');
    const other = await owner('block-owner', 'Bob Owner');
    await green('block-owner');
    await green(child);
    await green(other);
    expect(await status('block-owner')).toMatchObject({ status: 'approved', attempt: 1 });
    await act(child, 'blocklist');
    expect(await status(child)).toMatchObject({ status: 'rejected', reviewRejectType: 'FINAL' });
    expect(await status('block-owner')).toMatchObject({
      status: 'rejected',
      reviewAnswer: 'RED',
      reviewRejectType: 'FINAL',
      rejectLabels: ['UBO_REJECTED'],
      attempt: 2,
    });
    expect(await verdictEvents(id)).toEqual([
      'companyChildrenCompleted',
      'applicantReviewed',
      'companyChildrenCompleted',
      'applicantReviewed',
    ]);
    // An owner whose verdict does not change (unblocked: the verdict stays) moves nothing.
    await act(child, 'unblock');
    expect(await verdictEvents(id)).toHaveLength(4);
  });

  it("a RETRY-rejected owner blocklisted makes the company's RETRY a FINAL; a removed owner's does not", async () => {
    const id = await company('retry-block');
    const child = await owner('retry-block', 'Ann Owner');
    await green('retry-block');
    await review(child, { reviewAnswer: 'RED', rejectLabels: ['LOW_QUALITY'] });
    expect(await status('retry-block')).toMatchObject({ status: 'rejected', reviewRejectType: 'RETRY' });
    await act(child, 'blocklist');
    expect(await status('retry-block')).toMatchObject({ status: 'rejected', reviewRejectType: 'FINAL' });
    expect(await verdictEvents(id)).toHaveLength(4);

    await company('removed-block');
    const gone = await owner('removed-block', 'Ann Owner');
    await green('removed-block');
    await green(gone);
    await api().delete('/v1/applicants/removed-block/ubos/0').set(auth()).expect(200);
    await act(gone, 'blocklist');
    expect(await status('removed-block')).toMatchObject({ status: 'approved' });
  });
});

describe('removing the rows of open children', () => {
  it('removing the row of the only spawned child releases the company: pending, companyChildrenCompleted', async () => {
    const id = await company('only-row');
    await owner('only-row', 'Ann Owner');
    await api().delete('/v1/applicants/only-row/ubos/0').set(auth()).expect(200);
    expect((await status('only-row')).status).toBe('pending');
    expect(await verdictEvents(id)).toEqual(['companyChildrenCompleted']);
    // A row that never had a child changes nothing and sends nothing.
    await api()
      .post('/v1/applicants/only-row/ubos')
      .set(auth())
      .send({ fullName: 'Cy Nobody', dateOfBirth: '1970-01-01', ownershipPercent: 1, roles: ['ubo'] })
      .expect(201);
    await api().delete('/v1/applicants/only-row/ubos/1').set(auth()).expect(200);
    expect(await verdictEvents(id)).toEqual(['companyChildrenCompleted']);
  });

  it('removing the only open row completes a held verdict', async () => {
    const id = await company('only-row-held');
    await owner('only-row-held', 'Ann Owner');
    await green('only-row-held');
    await api().delete('/v1/applicants/only-row-held/ubos/0').set(auth()).expect(200);
    expect(await status('only-row-held')).toMatchObject({ status: 'approved', attempt: 1 });
    expect(await verdictEvents(id)).toEqual(['companyChildrenCompleted', 'applicantReviewed']);
  });
});

describe('deactivation and the roll-up', () => {
  it('a company deactivated while its children finish leaves awaiting_user when activated', async () => {
    const id = await company('off-parent');
    const child = await owner('off-parent', 'Ann Owner');
    await act('off-parent', 'deactivate');
    await green(child);
    expect(await verdictEvents(id)).toEqual(['companyChildrenCompleted']);
    await act('off-parent', 'activate');
    expect((await status('off-parent')).status).toBe('pending');
  });

  it('a held verdict is not applied while the company is deactivated, and is on activate', async () => {
    const id = await company('off-held');
    const child = await owner('off-held', 'Ann Owner');
    await green('off-held');
    await act('off-held', 'deactivate');
    await green(child);
    expect(await status('off-held')).toMatchObject({ status: 'deactivated', reviewAnswer: null });
    expect(await verdictEvents(id)).toEqual(['companyChildrenCompleted']);
    await act('off-held', 'activate');
    expect(await status('off-held')).toMatchObject({ status: 'approved', reviewAnswer: 'GREEN', attempt: 1 });
    expect(await verdictEvents(id)).toEqual(['companyChildrenCompleted', 'applicantReviewed']);
  });

  it('activating an approved child that was deactivated closes the round it held open', async () => {
    const id = await company('off-child');
    const [first, second] = [await owner('off-child', 'Ann Owner'), await owner('off-child', 'Ben Holder')];
    await green(second);
    await act(second, 'deactivate');
    await green(first);
    expect((await status('off-child')).status).toBe('awaiting_user');
    await act(second, 'activate');
    expect((await status('off-child')).status).toBe('pending');
    expect(await verdictEvents(id)).toEqual(['companyChildrenCompleted']);
  });
});
