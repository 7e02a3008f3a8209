import { COMPANY_LEVEL, type Credential, type Harness, INDIVIDUAL_LEVEL, startHarness } from './harness';

let h: Harness;
let key: Credential;

const COMPANY = {
  externalUserId: 'co-1',
  type: 'company',
  verificationLevelName: 'KYB_FULL',
  companyName: 'Acme Ltd',
  registrationNumber: 'RC-1',
  legalForm: 'LLC',
  incorporationDate: '2020-01-31',
  registeredAddress: '1 Main St',
  country: 'GB',
};

beforeAll(async () => {
  h = await startHarness();
  const t = await h.tenant();
  key = t.key;
  await h.admin('post', `/products/${t.productId}/levels`, INDIVIDUAL_LEVEL);
  await h.admin('post', `/products/${t.productId}/levels`, COMPANY_LEVEL);
  await h.http().post('/v1/applicants').set(h.auth(key)).send(COMPANY).expect(201);
  await h.http().post('/v1/applicants').set(h.auth(key)).send({ externalUserId: 'ind-1' }).expect(201);
});
afterAll(() => h?.close());

describe('company-info', () => {
  it('GET returns the exact shape, legalForm in lower case', async () => {
    const res = await h.http().get('/v1/applicants/co-1/company-info').set(h.auth(key)).expect(200);
    expect(res.body).toEqual({
      externalUserId: 'co-1',
      companyName: 'Acme Ltd',
      registrationNumber: 'RC-1',
      legalForm: 'llc',
      registeredAddress: '1 Main St',
      country: 'GB',
      verificationLevelName: 'KYB_FULL',
      incorporationDate: '2020-01-31',
      status: 'init',
      riskLevel: 'unknown',
      createdAtUtc: expect.any(String),
      updatedAtUtc: expect.any(String),
    });
  });

  it('400 {message} on an individual applicant', async () => {
    for (const path of ['company-info', 'company-structure']) {
      const res = await h.http().get(`/v1/applicants/ind-1/${path}`).set(h.auth(key)).expect(400);
      expect(res.body).toEqual({ message: 'Applicant is not a company' });
    }
    const patch = await h
      .http()
      .patch('/v1/applicants/ind-1/company-info')
      .set(h.auth(key))
      .send({ companyName: 'X' })
      .expect(400);
    expect(patch.body).toEqual({ message: 'Applicant is not a company' });
  });

  it('PATCH updates only the fields sent, re-claims them and emits applicantPersonalInfoChanged', async () => {
    const before = await h.http().get('/v1/applicants/co-1').set(h.auth(key)).expect(200);
    const res = await h
      .http()
      .patch('/v1/applicants/co-1/company-info')
      .set(h.auth(key))
      .send({ registeredAddress: '2 High St', phone: '+441234' })
      .expect(200);
    expect(res.body).toMatchObject({
      registeredAddress: '2 High St',
      companyName: 'Acme Ltd',
      country: 'GB',
    });
    const after = await h.http().get('/v1/applicants/co-1').set(h.auth(key)).expect(200);
    expect(after.body.lockedFields).toEqual([...before.body.lockedFields, 'phone'].sort());
    expect(after.body.info.phone).toBe('+441234');
    const [claim] = await h.sql<{ value: unknown }>(
      "SELECT value FROM field_claims WHERE applicant_id = $1 AND field = 'legalAddress'",
      [after.body.id],
    );
    expect(claim.value).toBe('2 High St');
    const events = await h.sql<{ event_type: string; data: Record<string, unknown> }>(
      "SELECT event_type, data FROM outbox WHERE entity_id = $1 AND event_type = 'applicantPersonalInfoChanged'",
      [after.body.id],
    );
    expect(events).toHaveLength(1);
    expect(events[0].data).toMatchObject({
      changedFields: ['legalAddress', 'phone'],
      externalUserId: 'co-1',
    });
    const history = await h.http().get('/v1/applicants/co-1/review-history').set(h.auth(key)).expect(200);
    expect(history.body.items.map((i: { eventType: string }) => i.eventType)).toEqual([
      'applicant.created',
      'applicant.updated',
    ]);
  });

  it('PATCH refuses unknown fields with 400 {message}', async () => {
    const res = await h
      .http()
      .patch('/v1/applicants/co-1/company-info')
      .set(h.auth(key))
      .send({ ubos: [] })
      .expect(400);
    expect(Object.keys(res.body)).toEqual(['message']);
  });

  it('a country change is 409 while a verification is in flight; other fields still change', async () => {
    await h
      .http()
      .post('/v1/applicants')
      .set(h.auth(key))
      .send({ ...COMPANY, externalUserId: 'co-2' })
      .expect(201);
    await h
      .http()
      .patch('/v1/applicants/co-2/company-info')
      .set(h.auth(key))
      .send({ country: 'DE' })
      .expect(200);
    await h.http().post('/v1/applicants/co-2/verifications').set(h.auth(key)).expect(202);
    const refused = await h
      .http()
      .patch('/v1/applicants/co-2/company-info')
      .set(h.auth(key))
      .send({ country: 'FR' })
      .expect(409);
    expect(refused.body).toEqual({
      message: 'country cannot change while a verification is in flight; reset the applicant first',
    });
    // Re-sending the same country is not a change.
    await h
      .http()
      .patch('/v1/applicants/co-2/company-info')
      .set(h.auth(key))
      .send({ country: 'DE' })
      .expect(200);
    const ok = await h
      .http()
      .patch('/v1/applicants/co-2/company-info')
      .set(h.auth(key))
      .send({ companyName: 'Renamed' })
      .expect(200);
    expect(ok.body).toMatchObject({ companyName: 'Renamed', country: 'DE' });
  });
});

describe('company-structure', () => {
  it('returns the counts shape, zeros until UBOs exist', async () => {
    const res = await h.http().get('/v1/applicants/co-1/company-structure').set(h.auth(key)).expect(200);
    expect(res.body).toEqual({
      externalUserId: 'co-1',
      hasNoUbos: false,
      hasNoShareholders: false,
      hasNoDirectors: false,
      hasNoRepresentatives: false,
      counts: {
        total: 0,
        ubos: 0,
        directors: 0,
        shareholders: 0,
        representatives: 0,
        spawned: 0,
        completed: 0,
        rejected: 0,
        pending: 0,
      },
      // No spawned child is open (decision 0476).
      allChildrenComplete: true,
      lastChildCompletedAtUtc: null,
    });
  });

  it('counts UBO rows per role (a row with several roles counts in each)', async () => {
    const [parent] = await h.sql<{ id: string }>("SELECT id FROM applicants WHERE external_user_id = 'co-1'");
    await h.sql(
      `INSERT INTO ubos (parent_applicant_id, ubo_index, full_name, roles) VALUES
         ($1, 0, 'A', '["ubo","director"]'), ($1, 1, 'B', '["shareholder"]')`,
      [parent.id],
    );
    const res = await h.http().get('/v1/applicants/co-1/company-structure').set(h.auth(key)).expect(200);
    expect(res.body.counts).toEqual({
      total: 2,
      ubos: 1,
      directors: 1,
      shareholders: 1,
      representatives: 0,
      spawned: 0,
      completed: 0,
      rejected: 0,
      pending: 0,
    });
  });
});
