import { COMPANY_LEVEL, type Credential, type Harness, INDIVIDUAL_LEVEL, startHarness } from './harness';

let h: Harness;
let productId: string;
let key: Credential;
let sandboxKey: Credential;

const SPAWN_CAP = 25;
const REGENERATE_CAP = 2;

const company = (externalUserId: string, credential = key) =>
  h
    .http()
    .post('/v1/applicants')
    .set(h.auth(credential))
    .send({ externalUserId, type: 'company', verificationLevelName: 'KYB_FULL', companyName: 'Acme' })
    .expect(201);

const addUbo = (externalUserId: string, row: Record<string, unknown>, credential = key) =>
  h.http().post(`/v1/applicants/${externalUserId}/ubos`).set(h.auth(credential)).send(row);

const JANE = {
  fullName: 'Jane Quincy Doe',
  dateOfBirth: '1980-02-03',
  ownershipPercent: 40,
  roles: ['ubo', 'director'],
  email: 'jane@example.com',
  nationality: 'GB',
};

const spawn = (externalUserId: string, index: number, body: unknown = {}, credential = key) =>
  h
    .http()
    .post(`/v1/applicants/${externalUserId}/ubos/${index}/spawn-kyc`)
    .set(h.auth(credential))
    .send(body as object);

const regenerate = (externalUserId: string, index: number, body: unknown = {}, credential = key) =>
  h
    .http()
    .post(`/v1/applicants/${externalUserId}/ubos/${index}/regenerate-link`)
    .set(h.auth(credential))
    .send(body as object);

beforeAll(async () => {
  h = await startHarness({
    VERIFICATION_SPAWN_PER_HOUR: String(SPAWN_CAP),
    VERIFICATION_REGENERATE_PER_DAY: String(REGENERATE_CAP),
  });
  ({ productId, key } = await h.tenant());
  sandboxKey = await h.admin<Credential>('post', `/products/${productId}/keys`, { environment: 'sandbox' });
  await h.admin('post', `/products/${productId}/levels`, INDIVIDUAL_LEVEL);
  await h.admin('post', `/products/${productId}/levels`, COMPANY_LEVEL);
  await h.http().post('/v1/applicants').set(h.auth(key)).send({ externalUserId: 'ind-1' }).expect(201);
}, 60_000);
afterAll(() => h?.close());

describe('UBO rows', () => {
  it('POST appends rows with their uboIndex; GET lists them', async () => {
    await company('co-rows');
    const first = await addUbo('co-rows', JANE).expect(201);
    expect(first.body).toEqual({
      uboIndex: 0,
      fullName: 'Jane Quincy Doe',
      dateOfBirth: '1980-02-03',
      ownershipPercent: 40,
      roles: ['ubo', 'director'],
      email: 'jane@example.com',
      nationality: 'GB',
      linkedApplicantId: null,
      source: 'partner',
      verificationLinkUrl: null,
      verificationLinkExpiresAtUtc: null,
      identityChangedAfterSpawn: false,
      removed: false,
      createdAtUtc: expect.any(String),
      updatedAtUtc: expect.any(String),
    });
    const second = await addUbo('co-rows', { ...JANE, fullName: 'Bob', roles: ['shareholder'] }).expect(201);
    expect(second.body.uboIndex).toBe(1);
    const list = await h.http().get('/v1/applicants/co-rows/ubos').set(h.auth(key)).expect(200);
    expect(list.body.totalItems).toBe(2);
    expect(list.body.items.map((r: { uboIndex: number }) => r.uboIndex)).toEqual([0, 1]);
  });

  it('refuses bad rows with 400 {message} and stores nothing', async () => {
    await company('co-bad');
    for (const row of [
      { ...JANE, fullName: '' },
      { ...JANE, dateOfBirth: '1980-13-45' },
      { ...JANE, ownershipPercent: 101 },
      { ...JANE, roles: [] },
      { ...JANE, roles: ['king'] },
      { ...JANE, email: 'nope' },
    ]) {
      const res = await addUbo('co-bad', row).expect(400);
      expect(Object.keys(res.body)).toEqual(['message']);
    }
    const list = await h.http().get('/v1/applicants/co-bad/ubos').set(h.auth(key)).expect(200);
    expect(list.body.totalItems).toBe(0);
  });

  it('an individual applicant answers 400; an index out of range 404', async () => {
    const res = await addUbo('ind-1', JANE).expect(400);
    expect(res.body).toEqual({ message: 'Applicant is not a company' });
    await h.http().get('/v1/applicants/ind-1/ubos').set(h.auth(key)).expect(400);
    await h
      .http()
      .patch('/v1/applicants/co-rows/ubos/7')
      .set(h.auth(key))
      .send({ fullName: 'X' })
      .expect(404);
    await h
      .http()
      .patch('/v1/applicants/co-rows/ubos/-1')
      .set(h.auth(key))
      .send({ fullName: 'X' })
      .expect(404);
    await spawn('co-rows', 99).expect(404);
    await regenerate('co-rows', 99).expect(404);
  });

  it("another product's company answers 403 on every UBO route", async () => {
    const other = await h.tenant('Other');
    const calls = [
      h.http().get('/v1/applicants/co-rows/ubos').set(h.auth(other.key)),
      h.http().post('/v1/applicants/co-rows/ubos').set(h.auth(other.key)).send(JANE),
      h.http().patch('/v1/applicants/co-rows/ubos/0').set(h.auth(other.key)).send({ fullName: 'X' }),
      h.http().delete('/v1/applicants/co-rows/ubos/0').set(h.auth(other.key)),
      h.http().post('/v1/applicants/co-rows/ubos/0/spawn-kyc').set(h.auth(other.key)).send({}),
      h.http().post('/v1/applicants/co-rows/ubos/0/regenerate-link').set(h.auth(other.key)).send({}),
    ];
    for (const res of await Promise.all(calls)) expect(res.status).toBe(403);
    const list = await h.http().get('/v1/applicants/co-rows/ubos').set(h.auth(key)).expect(200);
    expect(list.body.totalItems).toBe(2);
  });

  it('PATCH edits fields and silently ignores the locked ones', async () => {
    const res = await h
      .http()
      .patch('/v1/applicants/co-rows/ubos/1')
      .set(h.auth(key))
      .send({
        ownershipPercent: 12.5,
        linkedApplicantId: '00000000-0000-0000-0000-000000000000',
        source: 'registry',
        verificationLinkUrl: 'https://evil.example/x',
        verificationLinkExpiresAtUtc: '2099-01-01T00:00:00Z',
      })
      .expect(200);
    expect(res.body).toMatchObject({
      uboIndex: 1,
      ownershipPercent: 12.5,
      linkedApplicantId: null,
      source: 'partner',
      verificationLinkUrl: null,
      verificationLinkExpiresAtUtc: null,
      identityChangedAfterSpawn: false,
    });
  });

  it('PATCH refuses an unknown key and changes nothing; a row read and sent back whole is an edit (0486)', async () => {
    const path = '/v1/applicants/co-rows/ubos/1';
    const before = (await h.http().get(path).set(h.auth(key)).expect(200)).body;
    const misspelt = await h
      .http()
      .patch(path)
      .set(h.auth(key))
      .send({ fulName: 'Typo', ownershipPercent: 1 });
    expect([misspelt.status, misspelt.body]).toEqual([400, { message: 'Unrecognized key: "fulName"' }]);
    expect((await h.http().get(path).set(h.auth(key)).expect(200)).body).toEqual(before);
    const edited = await h
      .http()
      .patch(path)
      .set(h.auth(key))
      .send({ ...before, fullName: 'Renamed' })
      .expect(200);
    expect(edited.body).toMatchObject({ ...before, fullName: 'Renamed', updatedAtUtc: expect.any(String) });
  });

  it('removal marks the row removed; later rows keep their index and a new row takes the next one', async () => {
    await company('co-rm');
    await addUbo('co-rm', JANE).expect(201);
    await addUbo('co-rm', { ...JANE, fullName: 'Second' }).expect(201);
    const removed = await h.http().delete('/v1/applicants/co-rm/ubos/0').set(h.auth(key)).expect(200);
    expect(removed.body).toMatchObject({ uboIndex: 0, removed: true });
    const third = await addUbo('co-rm', { ...JANE, fullName: 'Third' }).expect(201);
    expect(third.body.uboIndex).toBe(2);
    const list = await h.http().get('/v1/applicants/co-rm/ubos').set(h.auth(key)).expect(200);
    expect(
      list.body.items.map((r: { uboIndex: number; removed: boolean }) => [r.uboIndex, r.removed]),
    ).toEqual([
      [0, true],
      [1, false],
      [2, false],
    ]);
    await h.http().patch('/v1/applicants/co-rm/ubos/0').set(h.auth(key)).send({ fullName: 'X' }).expect(409);
    await spawn('co-rm', 0).expect(409);
    const structure = await h
      .http()
      .get('/v1/applicants/co-rm/company-structure')
      .set(h.auth(key))
      .expect(200);
    expect(structure.body.counts.total).toBe(2);
  });

  it('the negative-declaration flags are settable', async () => {
    await company('co-neg');
    const res = await h
      .http()
      .patch('/v1/applicants/co-neg/company-structure')
      .set(h.auth(key))
      .send({ hasNoUbos: true, hasNoRepresentatives: true })
      .expect(200);
    expect(res.body).toMatchObject({
      hasNoUbos: true,
      hasNoShareholders: false,
      hasNoDirectors: false,
      hasNoRepresentatives: true,
    });
    const again = await h
      .http()
      .patch('/v1/applicants/co-neg/company-structure')
      .set(h.auth(key))
      .send({ hasNoUbos: false })
      .expect(200);
    expect(again.body).toMatchObject({ hasNoUbos: false, hasNoRepresentatives: true });
    await h
      .http()
      .patch('/v1/applicants/co-neg/company-structure')
      .set(h.auth(key))
      .send({ hasNoUbos: 'yes' })
      .expect(400);
  });
});

describe('row rules (decision 0445)', () => {
  it('ownership shares of live rows add up to at most 100 %: POST and PATCH past it answer 422, nothing stored', async () => {
    await company('co-shares');
    await addUbo('co-shares', { ...JANE, ownershipPercent: 60 }).expect(201);
    const over = await addUbo('co-shares', { ...JANE, fullName: 'Bob Roe', ownershipPercent: 40.01 }).expect(
      422,
    );
    expect(over.body.message).toMatch(/100\.01 %/);
    await addUbo('co-shares', { ...JANE, fullName: 'Bob Roe', ownershipPercent: 40 }).expect(201);
    await h
      .http()
      .patch('/v1/applicants/co-shares/ubos/1')
      .set(h.auth(key))
      .send({ ownershipPercent: 41 })
      .expect(422);
    // A removed row's share no longer counts.
    await h.http().delete('/v1/applicants/co-shares/ubos/0').set(h.auth(key)).expect(200);
    await h
      .http()
      .patch('/v1/applicants/co-shares/ubos/1')
      .set(h.auth(key))
      .send({ ownershipPercent: 100 })
      .expect(200);
    const rows = await h.http().get('/v1/applicants/co-shares/ubos').set(h.auth(key)).expect(200);
    expect(rows.body.items.map((r: { ownershipPercent: number }) => r.ownershipPercent)).toEqual([60, 100]);
  });

  it('an edit of a row that leaves its identity and share alone is not held to the row rules', async () => {
    // A company whose rows broke the share rule before it existed (written straight to the table): its roles and
    // emails can still be edited; an edit of a share is still checked.
    await company('co-legacy');
    await addUbo('co-legacy', { ...JANE, ownershipPercent: 60 }).expect(201);
    await addUbo('co-legacy', { ...JANE, fullName: 'Bob Roe', ownershipPercent: 40 }).expect(201);
    await h.sql(
      `UPDATE ubos SET ownership_percent = 70
        WHERE parent_applicant_id = (SELECT id FROM applicants WHERE external_user_id = 'co-legacy') AND ubo_index = 1`,
    );
    await h
      .http()
      .patch('/v1/applicants/co-legacy/ubos/1')
      .set(h.auth(key))
      .send({ roles: ['director'], email: 'bob@example.com' })
      .expect(200);
    await h
      .http()
      .patch('/v1/applicants/co-legacy/ubos/1')
      .set(h.auth(key))
      .send({ ownershipPercent: 50 })
      .expect(422);
  });

  it('two concurrent appends that together pass 100 %: one is stored, the other answers 422', async () => {
    await company('co-share-race');
    const answers = await Promise.all(
      ['Ann Owner', 'Ben Owner'].map((fullName) =>
        addUbo('co-share-race', { ...JANE, fullName, ownershipPercent: 60 }),
      ),
    );
    expect(answers.map((a) => a.status).sort()).toEqual([201, 422]);
  });

  it('one row per person: the same name (any case, extra spaces) and birth date answers 409 naming the row', async () => {
    await company('co-twice');
    await addUbo('co-twice', JANE).expect(201);
    const twice = await addUbo('co-twice', {
      ...JANE,
      fullName: '  jane   QUINCY doe ',
      ownershipPercent: 0,
      roles: ['representative'],
    }).expect(409);
    expect(twice.body.message).toMatch(/row 0/);
    // Another person of the same name is told apart by the birth date; a PATCH into a duplicate is refused too.
    await addUbo('co-twice', { ...JANE, dateOfBirth: '1990-01-01', ownershipPercent: 10 }).expect(201);
    await h
      .http()
      .patch('/v1/applicants/co-twice/ubos/1')
      .set(h.auth(key))
      .send({ dateOfBirth: '1980-02-03' })
      .expect(409);
  });

  it('a company holds at most 100 live rows', async () => {
    await company('co-many');
    for (let i = 0; i < 100; i++) {
      await addUbo('co-many', {
        fullName: `Director ${i}`,
        dateOfBirth: '1970-01-01',
        ownershipPercent: 0,
        roles: ['director'],
      }).expect(201);
    }
    const full = await addUbo('co-many', {
      fullName: 'One More',
      dateOfBirth: '1970-01-01',
      ownershipPercent: 0,
      roles: ['director'],
    }).expect(422);
    expect(full.body.message).toMatch(/at most 100 rows/);
  });
});

describe('company-structure counts', () => {
  it('counts a multi-role row once in each role bucket, from live state', async () => {
    await company('co-count');
    await addUbo('co-count', { ...JANE, roles: ['ubo', 'director', 'shareholder'] }).expect(201);
    await addUbo('co-count', {
      ...JANE,
      fullName: 'Rep Only',
      ownershipPercent: 0,
      roles: ['representative'],
    }).expect(201);
    await addUbo('co-count', {
      ...JANE,
      fullName: 'Dir Ubo',
      ownershipPercent: 30,
      roles: ['director', 'ubo'],
    }).expect(201);
    await spawn('co-count', 0).expect(201);
    const res = await h.http().get('/v1/applicants/co-count/company-structure').set(h.auth(key)).expect(200);
    expect(res.body).toEqual({
      externalUserId: 'co-count',
      hasNoUbos: false,
      hasNoShareholders: false,
      hasNoDirectors: false,
      hasNoRepresentatives: false,
      counts: {
        total: 3,
        ubos: 2,
        directors: 2,
        shareholders: 1,
        representatives: 1,
        spawned: 1,
        completed: 0,
        rejected: 0,
        pending: 1,
      },
      allChildrenComplete: false,
      lastChildCompletedAtUtc: null,
    });
    await h
      .http()
      .patch('/v1/applicants/co-count/ubos/2')
      .set(h.auth(key))
      .send({ roles: ['ubo'] })
      .expect(200);
    const after = await h
      .http()
      .get('/v1/applicants/co-count/company-structure')
      .set(h.auth(key))
      .expect(200);
    expect(after.body.counts).toMatchObject({ ubos: 2, directors: 1 });
  });
});

describe('spawn-kyc', () => {
  it('creates the child with partner-claimed identity and answers the Spawn result; a repeat is 200 alreadyLinked', async () => {
    await company('co-spawn');
    await addUbo('co-spawn', JANE).expect(201);
    const first = await spawn('co-spawn', 0, {
      ttlDays: 3,
      lang: 'de',
      theme: 'dark',
      successUrl: 'https://partner.example/ok',
      returnUrl: 'not a url',
    }).expect(201);
    expect(first.body).toEqual({
      uboIndex: 0,
      childApplicantId: expect.any(String),
      childExternalUserId: 'co-spawn-ubo-0',
      alreadyLinked: false,
      sdkLink: {
        url: expect.stringMatching(/\/sdk\/[A-Za-z0-9_-]+$/),
        shortCode: expect.any(String),
        expiresAtUtc: expect.any(String),
        token: expect.any(String),
      },
    });
    const ttl = Date.parse(first.body.sdkLink.expiresAtUtc) - Date.now();
    expect(Math.round(ttl / 86_400_000)).toBe(3);

    const child = await h.http().get('/v1/applicants/co-spawn-ubo-0').set(h.auth(key)).expect(200);
    expect(child.body).toMatchObject({
      id: first.body.childApplicantId,
      type: 'individual',
      verificationLevelName: 'BASIC_KYC',
      info: { firstName: 'Jane Quincy', lastName: 'Doe', dateOfBirth: '1980-02-03' },
    });
    expect(child.body.lockedFields).toEqual(expect.arrayContaining(['firstName', 'lastName', 'dateOfBirth']));
    const parent = await h.http().get('/v1/applicants/co-spawn').set(h.auth(key)).expect(200);
    expect(parent.body.status).toBe('awaiting_user');

    // The link resolves, with the presentation fields, to the child's enrollment.
    const link = await h.http().get(`/api/v1/sdk/links/${first.body.sdkLink.shortCode}`).expect(200);
    expect(link.body).toMatchObject({
      levelName: 'BASIC_KYC',
      presentation: { lang: 'de', theme: 'dark', successUrl: 'https://partner.example/ok' },
    });
    const [enrollment] = await h.sql<{ applicantId: string }>(
      'SELECT applicant_id AS "applicantId" FROM enrollments WHERE id = $1',
      [link.body.enrollmentId],
    );
    expect(enrollment.applicantId).toBe(first.body.childApplicantId);

    const row = await h.http().get('/v1/applicants/co-spawn/ubos/0').set(h.auth(key)).expect(200);
    expect(row.body).toMatchObject({
      linkedApplicantId: first.body.childApplicantId,
      verificationLinkUrl: first.body.sdkLink.url,
      verificationLinkExpiresAtUtc: first.body.sdkLink.expiresAtUtc,
    });

    const repeat = await spawn('co-spawn', 0).expect(200);
    expect(repeat.body).toMatchObject({
      uboIndex: 0,
      childApplicantId: first.body.childApplicantId,
      childExternalUserId: 'co-spawn-ubo-0',
      alreadyLinked: true,
    });
    expect(repeat.body.sdkLink.shortCode).not.toBe(first.body.sdkLink.shortCode);
    const created = await h.sql(
      "SELECT 1 FROM outbox WHERE event_type = 'applicantCreated' AND entity_id = $1",
      [first.body.childApplicantId],
    );
    expect(created).toHaveLength(1);
  });

  it('an identity edit on a spawned row answers identityChangedAfterSpawn: true', async () => {
    const same = await h
      .http()
      .patch('/v1/applicants/co-spawn/ubos/0')
      .set(h.auth(key))
      .send({ ownershipPercent: 50 })
      .expect(200);
    expect(same.body.identityChangedAfterSpawn).toBe(false);
    const res = await h
      .http()
      .patch('/v1/applicants/co-spawn/ubos/0')
      .set(h.auth(key))
      .send({ dateOfBirth: '1981-02-03' })
      .expect(200);
    expect(res.body.identityChangedAfterSpawn).toBe(true);
  });

  it('ten concurrent spawns of one row give one child', async () => {
    await company('co-race');
    await addUbo('co-race', JANE).expect(201);
    const results = await Promise.all(Array.from({ length: 10 }, () => spawn('co-race', 0)));
    expect(results.map((r) => r.status).sort()).toEqual([200, 200, 200, 200, 200, 200, 200, 200, 200, 201]);
    expect(new Set(results.map((r) => r.body.childApplicantId)).size).toBe(1);
    expect(new Set(results.map((r) => r.body.sdkLink.shortCode)).size).toBe(10);
    const children = await h.sql("SELECT id FROM applicants WHERE external_user_id = 'co-race-ubo-0'");
    expect(children).toHaveLength(1);
  });

  it('422 when the product has no default individual level and none is named; 404 for an unknown level', async () => {
    const other = await h.tenant('NoLevels');
    await h.admin('post', `/products/${other.productId}/levels`, COMPANY_LEVEL);
    await company('co-nolevel', other.key);
    await addUbo('co-nolevel', JANE, other.key).expect(201);
    const res = await spawn('co-nolevel', 0, {}, other.key).expect(422);
    expect(Object.keys(res.body)).toEqual(['message']);
    await spawn('co-nolevel', 0, { levelName: 'NOPE_LEVEL' }, other.key).expect(404);
    await spawn('co-nolevel', 0, { ttlDays: 0 }, other.key).expect(400);
  });
});

describe('regenerate-link', () => {
  it('409 before spawn; 200 {uboIndex, childApplicantId, sdkLink} after', async () => {
    await company('co-regen');
    await addUbo('co-regen', JANE).expect(201);
    const before = await regenerate('co-regen', 0).expect(409);
    expect(Object.keys(before.body)).toEqual(['message']);
    const spawned = await spawn('co-regen', 0).expect(201);
    const res = await regenerate('co-regen', 0, { ttlDays: 2 }).expect(200);
    expect(res.body).toEqual({
      uboIndex: 0,
      childApplicantId: spawned.body.childApplicantId,
      sdkLink: {
        url: expect.any(String),
        shortCode: expect.any(String),
        expiresAtUtc: expect.any(String),
        token: expect.any(String),
      },
    });
    expect(res.body.sdkLink.shortCode).not.toBe(spawned.body.sdkLink.shortCode);
    const children = await h.sql("SELECT id FROM applicants WHERE external_user_id LIKE 'co-regen-ubo-%'");
    expect(children).toHaveLength(1);
  });

  it('clears a RETRY-rejected child so its new link works', async () => {
    await company('co-retry', sandboxKey);
    await addUbo('co-retry', JANE, sandboxKey).expect(201);
    await spawn('co-retry', 0, {}, sandboxKey).expect(201);
    await h
      .http()
      .post('/v1/applicants/co-retry-ubo-0/sandbox/review')
      .set(h.auth(sandboxKey))
      .send({ reviewAnswer: 'RED', reviewRejectType: 'RETRY', steps: { identity_doc: 'RED' } })
      .expect(200);
    const rejected = await h
      .http()
      .get('/v1/applicants/co-retry-ubo-0/status')
      .set(h.auth(sandboxKey))
      .expect(200);
    expect(rejected.body).toMatchObject({ status: 'rejected', reviewRejectType: 'RETRY' });

    const res = await regenerate('co-retry', 0, {}, sandboxKey).expect(200);
    const status = await h
      .http()
      .get('/v1/applicants/co-retry-ubo-0/status')
      .set(h.auth(sandboxKey))
      .expect(200);
    expect(status.body.status).toBe('init');
    const link = await h.http().get(`/api/v1/sdk/links/${res.body.sdkLink.shortCode}`).expect(200);
    expect(link.body.levelName).toBe('BASIC_KYC');
    const steps = await h
      .http()
      .get('/v1/applicants/co-retry-ubo-0/steps')
      .set(h.auth(sandboxKey))
      .expect(200);
    const identity = steps.body.steps.find((s: { kind: string }) => s.kind === 'identity_doc');
    expect(identity).toMatchObject({ reviewStatus: 'pending', reviewAnswer: null });
  });
});

describe('environments (decision 0434)', () => {
  it("a child spawned by a sandbox key on a production company is production's: the sandbox review answers 422", async () => {
    await company('co-real');
    await addUbo('co-real', JANE).expect(201);
    await spawn('co-real', 0, {}, sandboxKey).expect(201);
    const [child] = await h.sql<{ sandbox: boolean }>(
      "SELECT sandbox FROM applicants WHERE external_user_id = 'co-real-ubo-0'",
    );
    expect(child.sandbox).toBe(false);
    const res = await h
      .http()
      .post('/v1/applicants/co-real-ubo-0/sandbox/review')
      .set(h.auth(sandboxKey))
      .send({ reviewAnswer: 'GREEN' })
      .expect(422);
    expect(Object.keys(res.body)).toEqual(['message']);
    const status = await h.http().get('/v1/applicants/co-real-ubo-0/status').set(h.auth(key)).expect(200);
    expect(status.body).toMatchObject({ status: 'init', reviewAnswer: null });
  });

  it('a child spawned by a production key on a sandbox company is sandbox', async () => {
    await company('co-test', sandboxKey);
    await addUbo('co-test', JANE).expect(201);
    await spawn('co-test', 0).expect(201);
    const [child] = await h.sql<{ sandbox: boolean }>(
      "SELECT sandbox FROM applicants WHERE external_user_id = 'co-test-ubo-0'",
    );
    expect(child.sandbox).toBe(true);
  });

  it("applicantPersonalInfoChanged carries the applicant's sandbox flag, not the editing key's", async () => {
    await company('co-edit');
    await h
      .http()
      .patch('/v1/applicants/co-edit/company-info')
      .set(h.auth(sandboxKey))
      .send({ companyName: 'Acme Holdings' })
      .expect(200);
    const events = await h.sql<{ sandbox: boolean }>(
      `SELECT (o.data->>'sandbox')::boolean AS sandbox FROM outbox o JOIN applicants a ON a.id::text = o.entity_id
        WHERE a.external_user_id = 'co-edit' AND o.event_type = 'applicantPersonalInfoChanged'`,
    );
    expect(events).toEqual([{ sandbox: false }]);
  });
});

describe('long ids', () => {
  it('the child of a parent whose externalUserId is 200 characters is reachable by its own id', async () => {
    const parent = `co-${'x'.repeat(197)}`;
    await company(parent);
    await addUbo(parent, JANE).expect(201);
    const spawned = await spawn(parent, 0).expect(201);
    expect(spawned.body.childExternalUserId).toBe(`${parent}-ubo-0`);
    const status = await h
      .http()
      .get(`/v1/applicants/${spawned.body.childExternalUserId}/status`)
      .set(h.auth(key))
      .expect(200);
    expect(status.body.externalUserId).toBe(`${parent}-ubo-0`);
  });
});

describe('caps (lowered by config)', () => {
  it(`regenerate-link: ${REGENERATE_CAP} per row, then 429 with an integer Retry-After; other rows unaffected`, async () => {
    await company('co-regcap');
    await addUbo('co-regcap', JANE).expect(201);
    await addUbo('co-regcap', { ...JANE, fullName: 'Other' }).expect(201);
    await spawn('co-regcap', 0).expect(201);
    await spawn('co-regcap', 1).expect(201);
    for (let i = 0; i < REGENERATE_CAP; i += 1) await regenerate('co-regcap', 0).expect(200);
    const refused = await regenerate('co-regcap', 0).expect(429);
    const retryAfter = refused.headers['retry-after'];
    expect(retryAfter).toMatch(/^\d+$/);
    expect(Number(retryAfter)).toBeGreaterThan(0);
    expect(Number(retryAfter)).toBeLessThanOrEqual(86_400);
    await regenerate('co-regcap', 1).expect(200);
  });

  it(`spawn-kyc: ${SPAWN_CAP} per credential per hour, then 429 with an integer Retry-After`, async () => {
    const other = await h.tenant('Caps');
    await h.admin('post', `/products/${other.productId}/levels`, INDIVIDUAL_LEVEL);
    await h.admin('post', `/products/${other.productId}/levels`, COMPANY_LEVEL);
    await company('co-cap', other.key);
    await addUbo('co-cap', JANE, other.key).expect(201);
    for (let i = 0; i < SPAWN_CAP; i += 1)
      await spawn('co-cap', 0, {}, other.key).expect(i === 0 ? 201 : 200);
    const refused = await spawn('co-cap', 0, {}, other.key).expect(429);
    expect(refused.headers['retry-after']).toMatch(/^\d+$/);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    expect(Number(refused.headers['retry-after'])).toBeLessThanOrEqual(3600);
    // Another credential still spawns.
    await company('co-cap2');
    await addUbo('co-cap2', JANE).expect(201);
    await spawn('co-cap2', 0).expect(201);
  });
});
