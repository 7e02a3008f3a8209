import { TEST_ADMIN_TOKEN } from '@tessera/testing';
import { COMPANY_LEVEL, type Credential, type Harness, INDIVIDUAL_LEVEL, startHarness } from './harness';

/**
 * A company's status and its spawned UBO children, driven by sandbox reviews and operator actions; the outbox
 * is read directly (the roll-up's delivery is company-rollup.e2e-spec.ts's).
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
