import { COMPANY_LEVEL, type Credential, type Harness, INDIVIDUAL_LEVEL, startHarness } from './harness';

let h: Harness;
let key: Credential;
let productId: string;

beforeAll(async () => {
  h = await startHarness();
  ({ productId, key } = await h.tenant());
  await h.admin('post', `/products/${productId}/levels`, INDIVIDUAL_LEVEL);
  await h.admin('post', `/products/${productId}/levels`, COMPANY_LEVEL);
  await h.admin('post', `/products/${productId}/levels`, {
    name: 'KYB_LIGHT',
    applicantType: 'company',
    steps: [{ kind: 'company_data' }],
  });
});
afterAll(() => h?.close());

const TS = expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);

describe('POST /v1/applicants', () => {
  it('creates an individual (201), a repeat answers 200 with the same body', async () => {
    const body = {
      externalUserId: 'ind-1',
      firstName: 'Ada',
      lastName: 'Lovelace',
      dateOfBirth: '1815-12-10',
      email: 'ada@example.com',
      address: 'dropped: not enabled by the level',
    };
    const created = await h.http().post('/v1/applicants').set(h.auth(key)).send(body).expect(201);
    expect(created.body).toEqual({
      id: expect.any(String),
      externalUserId: 'ind-1',
      type: 'individual',
      verificationLevelName: 'BASIC_KYC',
      status: 'init',
      riskLevel: 'unknown',
      createdAtUtc: TS,
      updatedAtUtc: TS,
      lockedFields: ['dateOfBirth', 'email', 'firstName', 'lastName'],
      info: { firstName: 'Ada', lastName: 'Lovelace', dateOfBirth: '1815-12-10', email: 'ada@example.com' },
    });
    const repeat = await h
      .http()
      .post('/v1/applicants')
      .set(h.auth(key))
      .send({ ...body, firstName: 'Changed' })
      .expect(200);
    expect(repeat.body).toEqual(created.body);
    const fetched = await h.http().get('/v1/applicants/ind-1').set(h.auth(key)).expect(200);
    expect(fetched.body).toEqual(created.body);
  });

  it('maps company fields to level keys and drops what the level does not enable', async () => {
    const full = await h
      .http()
      .post('/v1/applicants')
      .set(h.auth(key))
      .send({
        externalUserId: 'co-1',
        type: 'company',
        verificationLevelName: 'KYB_FULL',
        companyName: 'Acme Ltd',
        registrationNumber: 'RC-1',
        legalForm: 'LLC',
        incorporationDate: '2020-01-31',
        registeredAddress: '1 Main St',
        country: 'GB',
        email: 'ops@acme.test',
      })
      .expect(201);
    expect(full.body.lockedFields).toEqual([
      'companyName',
      'email',
      'incorporatedOn',
      'legalAddress',
      'legalForm',
      'registrationCountry',
      'registrationNumber',
    ]);
    expect(full.body.info).toEqual({
      companyName: 'Acme Ltd',
      registrationNumber: 'RC-1',
      legalForm: 'LLC',
      incorporationDate: '2020-01-31',
      registeredAddress: '1 Main St',
      country: 'GB',
      email: 'ops@acme.test',
    });
    const claims = await h.sql<{ field: string; claimed_by: string }>(
      'SELECT field, claimed_by FROM field_claims WHERE applicant_id = $1 ORDER BY field',
      [full.body.id],
    );
    expect(claims.map((c) => c.field)).toEqual(full.body.lockedFields);
    expect(new Set(claims.map((c) => c.claimed_by))).toEqual(new Set(['partner']));

    // KYB_LIGHT keeps the baseline: legalForm and incorporatedOn are not enabled, so they are dropped.
    const light = await h
      .http()
      .post('/v1/applicants')
      .set(h.auth(key))
      .send({
        externalUserId: 'co-2',
        type: 'company',
        verificationLevelName: 'KYB_LIGHT',
        companyName: 'Light Ltd',
        legalForm: 'LLC',
        incorporationDate: '2020-01-31',
        country: 'FR',
      })
      .expect(201);
    expect(light.body.info).toEqual({ companyName: 'Light Ltd', country: 'FR' });
    expect(light.body.lockedFields).toEqual(['companyName', 'registrationCountry']);
  });

  it('an applicant without a level and no default for its type has verificationLevelName null', async () => {
    const res = await h
      .http()
      .post('/v1/applicants')
      .set(h.auth(key))
      .send({ externalUserId: 'co-nolevel', type: 'company', companyName: 'N' })
      .expect(201);
    expect(res.body.verificationLevelName).toBeNull();
  });

  it('400 {message} for a missing externalUserId, a bad body or a level of the other type', async () => {
    const missing = await h
      .http()
      .post('/v1/applicants')
      .set(h.auth(key))
      .send({ firstName: 'x' })
      .expect(400);
    expect(missing.body).toEqual({ message: 'externalUserId: is required' });
    const empty = await h
      .http()
      .post('/v1/applicants')
      .set(h.auth(key))
      .send({ externalUserId: '' })
      .expect(400);
    expect(empty.body).toEqual({ message: 'externalUserId: is required' });
    const array = await h.http().post('/v1/applicants').set(h.auth(key)).send([1]).expect(400);
    expect(array.body).toEqual({ message: 'Body must be a JSON object' });
    const malformed = await h
      .http()
      .post('/v1/applicants')
      .set(h.auth(key))
      .set('content-type', 'application/json')
      .send('{"externalUserId":')
      .expect(400);
    expect(Object.keys(malformed.body)).toEqual(['message']);
    const mismatch = await h
      .http()
      .post('/v1/applicants')
      .set(h.auth(key))
      .send({ externalUserId: 'x-1', type: 'company', verificationLevelName: 'BASIC_KYC' })
      .expect(400);
    expect(mismatch.body).toEqual({
      message: 'verificationLevelName: level BASIC_KYC is for individual applicants',
    });
  });

  it('400 {message} for a date of birth or incorporation that does not exist or is in the future; nothing created', async () => {
    const dates: [Record<string, unknown>, string][] = [
      [{ dateOfBirth: '1990-02-31' }, 'dateOfBirth'],
      [{ dateOfBirth: '2024-13-45' }, 'dateOfBirth'],
      [{ dateOfBirth: '2999-01-01' }, 'dateOfBirth'],
      [{ type: 'company', incorporationDate: '2999-01-01' }, 'incorporationDate'],
    ];
    for (const [fields, name] of dates) {
      const res = await h
        .http()
        .post('/v1/applicants')
        .set(h.auth(key))
        .send({ externalUserId: 'bad-date', ...fields })
        .expect(400);
      expect(res.body).toEqual({ message: `${name}: must be a date YYYY-MM-DD, not in the future` });
    }
    await h.http().get('/v1/applicants/bad-date').set(h.auth(key)).expect(404);
    await h
      .http()
      .post('/v1/applicants')
      .set(h.auth(key))
      .send({ externalUserId: 'leap-day', dateOfBirth: '2000-02-29' })
      .expect(201);
  });

  it('404 {message} for an unknown level name', async () => {
    const res = await h
      .http()
      .post('/v1/applicants')
      .set(h.auth(key))
      .send({ externalUserId: 'x-2', verificationLevelName: 'NOPE' })
      .expect(404);
    expect(res.body).toEqual({ message: 'Level not found' });
  });

  it('writes applicant.created and an applicantCreated outbox row in the same transaction', async () => {
    const res = await h
      .http()
      .post('/v1/applicants')
      .set(h.auth(key))
      .send({ externalUserId: 'ev-1' })
      .expect(201);
    const events = await h.sql('SELECT event_type, actor_type FROM review_events WHERE applicant_id = $1', [
      res.body.id,
    ]);
    expect(events).toEqual([{ event_type: 'applicant.created', actor_type: 'partner' }]);
    const outbox = await h.sql<{
      tenant_id: string;
      event_type: string;
      entity_type: string;
      entity_id: string;
      data: Record<string, unknown>;
    }>('SELECT tenant_id, event_type, entity_type, entity_id, data FROM outbox WHERE entity_id = $1', [
      res.body.id,
    ]);
    expect(outbox).toEqual([
      {
        tenant_id: productId,
        event_type: 'applicantCreated',
        entity_type: 'applicant',
        entity_id: res.body.id,
        data: {
          applicantId: res.body.id,
          externalUserId: 'ev-1',
          type: 'individual',
          levelName: 'BASIC_KYC',
          sandbox: false,
          createdAtUtc: res.body.createdAtUtc,
        },
      },
    ]);
    // A repeat writes nothing.
    await h.http().post('/v1/applicants').set(h.auth(key)).send({ externalUserId: 'ev-1' }).expect(200);
    expect(await h.sql('SELECT 1 FROM outbox WHERE entity_id = $1', [res.body.id])).toHaveLength(1);
  });

  it('50 parallel creates of one externalUserId give exactly one applicant (one 201, 49 × 200)', async () => {
    const responses = await Promise.all(
      Array.from({ length: 50 }, () =>
        h.http().post('/v1/applicants').set(h.auth(key)).send({ externalUserId: 'race-1', firstName: 'R' }),
      ),
    );
    const statuses = responses.map((r) => r.status).sort();
    expect(statuses.filter((s) => s === 201)).toHaveLength(1);
    expect(statuses.filter((s) => s === 200)).toHaveLength(49);
    expect(new Set(responses.map((r) => r.body.id)).size).toBe(1);
    const rows = await h.sql("SELECT id FROM applicants WHERE external_user_id = 'race-1'");
    expect(rows).toHaveLength(1);
    expect(await h.sql('SELECT 1 FROM outbox WHERE entity_id = $1', [responses[0].body.id])).toHaveLength(1);
  });

  it('GET /v1/applicants/{externalUserId}: 404 {message} when unknown', async () => {
    const res = await h.http().get('/v1/applicants/nobody').set(h.auth(key)).expect(404);
    expect(res.body).toEqual({ message: 'Applicant not found' });
  });
});
