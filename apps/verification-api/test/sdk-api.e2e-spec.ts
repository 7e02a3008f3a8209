import { SecretBox, signSdkToken } from '@tessera/auth';
import { LogCapture, mediaFixture, TEST_ADMIN_TOKEN, TEST_MASTER_KEY } from '@tessera/testing';
import { Client } from 'pg';
import { CHECKS_CHANNEL } from '../src/modules/checks/checks-channel';
import { SessionContexts } from '../src/modules/sessions/session-contexts';
import { SessionsService } from '../src/modules/sessions/sessions.service';
import { type Credential, type Harness, startHarness } from './harness';

let h: Harness;
let key: Credential;
let productId: string;

const QUESTIONNAIRE = {
  id: 'source-of-funds',
  title: 'Source of funds',
  questions: [
    {
      id: 'source',
      text: 'Main source of funds',
      type: 'select',
      required: true,
      options: ['salary', 'savings'],
    },
    { id: 'pep', text: 'Are you a politically exposed person?', type: 'boolean', required: true },
    { id: 'income', text: 'Yearly income', type: 'number' },
    { id: 'since', text: 'Customer since', type: 'date' },
    { id: 'markets', text: 'Markets', type: 'multiselect', options: ['eu', 'us'] },
    { id: 'note', text: 'Anything else', type: 'text' },
  ],
};

/** A level whose steps take no upload: it can be submitted end to end without the media store. */
const FORM_LEVEL = {
  name: 'FORMS_ONLY',
  applicantType: 'individual',
  steps: [{ kind: 'personal_information' }, { kind: 'questionnaire' }, { kind: 'aml' }],
  attachedQuestionnaireId: 'source-of-funds',
  personalInfoFields: ['firstName', 'lastName', 'dateOfBirth', 'nationality', 'email'],
  personalInfoRequiredFields: ['firstName', 'lastName', 'dateOfBirth'],
};

const DOC_LEVEL = {
  name: 'DOCS',
  applicantType: 'individual',
  steps: [{ kind: 'personal_information' }, { kind: 'identity_doc' }, { kind: 'selfie' }],
};

beforeAll(async () => {
  h = await startHarness();
  ({ productId, key } = await h.tenant());
  await h.admin('post', `/products/${productId}/questionnaires`, QUESTIONNAIRE);
  await h.admin('post', `/products/${productId}/levels`, FORM_LEVEL);
  await h.admin('post', `/products/${productId}/levels`, DOC_LEVEL);
});
afterAll(() => h?.close());

/** A new applicant (partner-claimed fields as given) and the token of a fresh link to `level`. */
async function session(externalUserId: string, level: string, claimed: Record<string, string> = {}) {
  await h
    .http()
    .post('/v1/applicants')
    .set(h.auth(key))
    .send({ externalUserId, verificationLevelName: level, ...claimed })
    .expect(201);
  const link = await h
    .http()
    .post(`/v1/applicants/${externalUserId}/verification-sessions?verificationLevelName=${level}`)
    .set(h.auth(key))
    .expect(202);
  const resolved = await h.http().get(`/api/v1/sdk/links/${link.body.shortCode}`).expect(200);
  return { token: resolved.body.token as string, enrollmentId: link.body.enrollmentId as string };
}

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

/** Saves the personal-information fields still missing for an applicant created with firstName Ada. */
const completePersonalInfo = (token: string) =>
  h
    .http()
    .post('/api/v1/sdk/personal-info')
    .set(bearer(token))
    .send({ lastName: 'Lovelace', dateOfBirth: '1815-12-10' })
    .expect(200);

describe('SDK token on every call', () => {
  it('401 {message} without a token, with a forged one, and with one signed for another key', async () => {
    const { token } = await session('tok-1', 'FORMS_ONLY');
    const claims = JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString());
    const forged = [
      undefined,
      'sdk1.garbage.garbage',
      `${token.slice(0, -4)}AAAA`,
      signSdkToken(claims, Buffer.alloc(32, 1)),
    ];
    for (const value of forged) {
      const req = h.http().get('/api/v1/sdk/session');
      if (value) void req.set(bearer(value));
      const res = await req.expect(401);
      expect(res.body).toEqual({ message: expect.any(String) });
      await h
        .http()
        .post('/api/v1/sdk/submit')
        .set(value ? bearer(value) : {})
        .expect(401);
    }
  });

  it('401 once the enrollment expired (410 on resolve), for a token past its exp, and once the link was replaced', async () => {
    const { token, enrollmentId } = await session('tok-2', 'FORMS_ONLY');
    await h.http().get('/api/v1/sdk/session').set(bearer(token)).expect(200);
    const claims = JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString());
    const tokenKey = SecretBox.pepper(TEST_MASTER_KEY, 'verification-sdk-token');
    const stale = signSdkToken({ ...claims, exp: Math.floor(Date.now() / 1000) - 1 }, tokenKey);
    await h.http().get('/api/v1/sdk/session').set(bearer(stale)).expect(401);

    await h.sql("UPDATE enrollments SET expires_at = now() - interval '1 second' WHERE id = $1", [
      enrollmentId,
    ]);
    const [{ short_code }] = await h.sql<{ short_code: string }>(
      'SELECT short_code FROM enrollments WHERE id = $1',
      [enrollmentId],
    );
    await h.http().get(`/api/v1/sdk/links/${short_code}`).expect(410);
    const expired = await h.http().get('/api/v1/sdk/session').set(bearer(token)).expect(401);
    expect(expired.body).toEqual({ message: 'The session is no longer valid' });

    // A link to another level moves the applicant there: the old session's token stops working.
    const moved = await session('tok-3', 'FORMS_ONLY');
    await h
      .http()
      .post('/v1/applicants/tok-3/verification-sessions?verificationLevelName=DOCS')
      .set(h.auth(key))
      .expect(202);
    await h.http().get('/api/v1/sdk/session').set(bearer(moved.token)).expect(401);
  });
});

describe('GET /api/v1/sdk/session', () => {
  it('answers the level, steps, field sets with the partner claims, presentation and redirects', async () => {
    await h
      .http()
      .post('/v1/applicants')
      .set(h.auth(key))
      .send({ externalUserId: 'sess-1', verificationLevelName: 'FORMS_ONLY', firstName: 'Ada' })
      .expect(201);
    const q = new URLSearchParams({
      verificationLevelName: 'FORMS_ONLY',
      lang: 'de',
      theme: 'dark',
      returnUrl: 'https://partner.test/back',
      successUrl: 'ftp://nope',
    });
    const link = await h
      .http()
      .post(`/v1/applicants/sess-1/verification-sessions?${q}`)
      .set(h.auth(key))
      .expect(202);
    const { token } = (await h.http().get(`/api/v1/sdk/links/${link.body.shortCode}`).expect(200)).body;
    const res = await h.http().get('/api/v1/sdk/session').set(bearer(token)).expect(200);
    expect(res.body).toMatchObject({
      applicantType: 'individual',
      levelName: 'FORMS_ONLY',
      lang: 'de',
      theme: 'dark',
      steps: [
        { kind: 'personal_information', optional: false, reviewStatus: 'pending', reviewAnswer: null },
        { kind: 'questionnaire', optional: false, reviewStatus: 'pending', reviewAnswer: null },
        { kind: 'aml', optional: false, reviewStatus: 'pending', reviewAnswer: null },
      ],
      personalInfo: {
        enabled: FORM_LEVEL.personalInfoFields,
        required: FORM_LEVEL.personalInfoRequiredFields,
        values: { firstName: 'Ada' },
        locked: ['firstName'],
      },
      companyData: null,
      redirects: { successUrl: null, errorUrl: null, returnUrl: 'https://partner.test/back' },
      enrollmentStatus: 'open',
    });
    expect(res.body.questionnaire.questionnaire.id).toBe('source-of-funds');
    expect(res.body.questionnaire.missing).toEqual(['source', 'pep']);
  });
});

describe('one context read per SDK call (decision 0415)', () => {
  it("the handler's first take is the guard's read; a later take, after a write, reads afresh", async () => {
    const { token, enrollmentId } = await session('ctx-once', 'FORMS_ONLY', { firstName: 'Ada' });
    const claims = h.app.get(SessionsService).verifyToken(token)!;
    const contexts = h.app.get(SessionContexts);
    const guardRead = contexts.load(claims);
    expect(contexts.take(claims)).toBe(guardRead);
    expect((await guardRead)!.enrollmentId).toBe(enrollmentId);
    // The same request's write, then its second take: the stored info, not the guard's snapshot.
    await completePersonalInfo(token).expect(200);
    const after = contexts.take(claims);
    expect(after).not.toBe(guardRead);
    expect((await after)!.applicant.info).toMatchObject({ lastName: 'Lovelace' });
    expect((await guardRead)!.applicant.info).not.toHaveProperty('lastName');
  });
});

describe('POST /api/v1/sdk/personal-info (field lock)', () => {
  it('refuses a changed locked value and names it, accepts an unchanged one, drops non-enabled keys, saves the rest', async () => {
    const { token } = await session('lock-1', 'FORMS_ONLY', { firstName: 'Ada', lastName: 'Lovelace' });
    const res = await h
      .http()
      .post('/api/v1/sdk/personal-info')
      .set(bearer(token))
      .send({
        firstName: 'Eve',
        lastName: 'Lovelace',
        dateOfBirth: '1815-12-10',
        phone: '+44 1',
        address: 'London',
      })
      .expect(200);
    expect(res.body).toEqual({
      values: { firstName: 'Ada', lastName: 'Lovelace', dateOfBirth: '1815-12-10' },
      lockedFields: ['firstName'],
    });
    const applicant = await h.http().get('/v1/applicants/lock-1').set(h.auth(key)).expect(200);
    expect(applicant.body.info).toEqual({
      firstName: 'Ada',
      lastName: 'Lovelace',
      dateOfBirth: '1815-12-10',
    });
    expect(applicant.body.lockedFields).toEqual(['firstName', 'lastName']);
    // The SDK's values are not claims: the user may still correct them.
    await h
      .http()
      .post('/api/v1/sdk/personal-info')
      .set(bearer(token))
      .send({ dateOfBirth: '1815-12-11' })
      .expect(200);
    const history = await h.http().get('/v1/applicants/lock-1/review-history').set(h.auth(key)).expect(200);
    const sdkUpdates = history.body.items.filter(
      (i: { eventType: string; actorType: string }) =>
        i.eventType === 'applicant.updated' && i.actorType === 'sdk',
    );
    expect(sdkUpdates).toHaveLength(2);
    const outbox = await h.sql("SELECT 1 FROM outbox WHERE event_type = 'applicantPersonalInfoChanged'");
    expect(outbox.length).toBeGreaterThanOrEqual(2);
  });

  it('a claimed country code resubmitted unchanged in either case is accepted; another code is refused', async () => {
    const { token } = await session('lock-cc', 'FORMS_ONLY', { nationality: 'de' });
    for (const nationality of ['de', 'DE']) {
      const same = await h
        .http()
        .post('/api/v1/sdk/personal-info')
        .set(bearer(token))
        .send({ nationality })
        .expect(200);
      expect(same.body.lockedFields).toEqual([]);
    }
    const other = await h
      .http()
      .post('/api/v1/sdk/personal-info')
      .set(bearer(token))
      .send({ nationality: 'FR' })
      .expect(200);
    // The partner's `de` is stored upper case (decision 0476).
    expect(other.body).toEqual({ values: { nationality: 'DE' }, lockedFields: ['nationality'] });
  });

  it('400 {message} for a value that cannot be stored under its key; nothing is saved', async () => {
    const { token } = await session('lock-2', 'FORMS_ONLY');
    const bad = await h
      .http()
      .post('/api/v1/sdk/personal-info')
      .set(bearer(token))
      .send({ firstName: 'Bob', dateOfBirth: '10/12/1815' })
      .expect(400);
    expect(bad.body).toEqual({ message: 'dateOfBirth: must be a date YYYY-MM-DD, not in the future' });
    await h.http().post('/api/v1/sdk/personal-info').set(bearer(token)).send({ firstName: 12 }).expect(400);
    await h.http().post('/api/v1/sdk/personal-info').set(bearer(token)).send([1]).expect(400);
    const applicant = await h.http().get('/v1/applicants/lock-2').set(h.auth(key)).expect(200);
    expect(applicant.body.info).toEqual({});
  });

  it('a key the level does not enable is dropped whatever its value; the rest are saved; junk bodies are still 400/413', async () => {
    const { token } = await session('lock-3', 'FORMS_ONLY');
    const post = (body: unknown) =>
      h
        .http()
        .post('/api/v1/sdk/personal-info')
        .set(bearer(token))
        .send(body as object);
    const res = await post({ firstName: 'A', age: 30, tags: ['x'], extra: { nested: true }, flag: false });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ values: { firstName: 'A' }, lockedFields: [] });
    const applicant = await h.http().get('/v1/applicants/lock-3').set(h.auth(key)).expect(200);
    expect(applicant.body.info).toEqual({ firstName: 'A' });
    // An enabled key still needs a string or null.
    expect((await post({ lastName: 30, age: 30 }).expect(400)).body).toEqual({
      message: 'lastName: must be a string or null',
    });
    expect((await post({ lastName: 'x'.repeat(501) }).expect(400)).body).toEqual({
      message: 'lastName: must be at most 500 characters',
    });
    // Bounds on the keys themselves (neither is echoed back).
    const many = Object.fromEntries(Array.from({ length: 101 }, (_, i) => [`k${i}`, 1]));
    expect((await post(many).expect(400)).body).toEqual({ message: 'body must hold at most 100 keys' });
    expect((await post({ ['k'.repeat(65)]: 1 }).expect(400)).body).toEqual({
      message: 'body keys must be at most 64 characters',
    });
    const huge = await post({ age: 'x'.repeat(2 * 1024 * 1024) });
    expect(huge.status).toBe(413);
    expect(huge.body).toEqual({ message: expect.any(String) });
    expect((await h.http().get('/v1/applicants/lock-3').set(h.auth(key)).expect(200)).body.info).toEqual({
      firstName: 'A',
    });
  });
});

describe('PATCH /v1/applicants/{externalUserId}/personal-info (the partner reopens a claim, decision 0436)', () => {
  const patch = (externalUserId: string, body: unknown) =>
    h
      .http()
      .patch(`/v1/applicants/${externalUserId}/personal-info`)
      .set(h.auth(key))
      .send(body as object);

  it('a value re-claims the field; null clears it and the end user can then fill it in', async () => {
    const { token } = await session('reopen-1', 'FORMS_ONLY', {
      firstName: 'Ada',
      lastName: 'Lovelace',
      dateOfBirth: '1815-12-11',
    });
    const res = await patch('reopen-1', { lastName: 'King', dateOfBirth: null }).expect(200);
    expect(res.body).toMatchObject({
      externalUserId: 'reopen-1',
      info: { firstName: 'Ada', lastName: 'King' },
      lockedFields: ['firstName', 'lastName'],
    });
    expect(res.body.info).not.toHaveProperty('dateOfBirth');
    const sdk = await h.http().get('/api/v1/sdk/session').set(bearer(token)).expect(200);
    expect(sdk.body.personalInfo.locked).toEqual(['firstName', 'lastName']);
    const typed = await h
      .http()
      .post('/api/v1/sdk/personal-info')
      .set(bearer(token))
      .send({ lastName: 'Byron', dateOfBirth: '1815-12-10' })
      .expect(200);
    expect(typed.body).toEqual({
      values: { firstName: 'Ada', lastName: 'King', dateOfBirth: '1815-12-10' },
      lockedFields: ['lastName'],
    });
    const events = await h.sql<{ data: { changedFields: string[]; claimedFields: string[] } }>(
      `SELECT o.data FROM outbox o JOIN applicants a ON a.id::text = o.entity_id
        WHERE a.external_user_id = 'reopen-1' AND o.event_type = 'applicantPersonalInfoChanged'
        ORDER BY o.sequence`,
    );
    expect(events[0].data).toMatchObject({
      changedFields: ['lastName', 'dateOfBirth'],
      claimedFields: ['lastName'],
    });
  });

  it('400 {message} for a company applicant, an unknown field, a bad date; 404 for an unknown applicant', async () => {
    await h
      .http()
      .post('/v1/applicants')
      .set(h.auth(key))
      .send({ externalUserId: 'reopen-co', type: 'company', companyName: 'Acme' })
      .expect(201);
    expect((await patch('reopen-co', { firstName: 'A' }).expect(400)).body).toEqual({
      message: 'Applicant is a company: its identity fields are PATCHed through company-info',
    });
    await session('reopen-2', 'FORMS_ONLY', { firstName: 'Ada' });
    expect((await patch('reopen-2', { nickname: 'x' }).expect(400)).body).toEqual({
      message: expect.stringContaining('nickname'),
    });
    expect((await patch('reopen-2', { dateOfBirth: '2999-01-01' }).expect(400)).body).toEqual({
      message: 'dateOfBirth: must be a date YYYY-MM-DD, not in the future',
    });
    await patch('nobody', { firstName: 'A' }).expect(404);
    const applicant = await h.http().get('/v1/applicants/reopen-2').set(h.auth(key)).expect(200);
    expect(applicant.body).toMatchObject({ info: { firstName: 'Ada' }, lockedFields: ['firstName'] });
  });

  it('company-info takes null too: the field is cleared and its claim reopened', async () => {
    await h
      .http()
      .post('/v1/applicants')
      .set(h.auth(key))
      .send({ externalUserId: 'reopen-co-2', type: 'company', companyName: 'Acme', registrationNumber: 'R1' })
      .expect(201);
    const res = await h
      .http()
      .patch('/v1/applicants/reopen-co-2/company-info')
      .set(h.auth(key))
      .send({ registrationNumber: null })
      .expect(200);
    expect(res.body).toMatchObject({ companyName: 'Acme', registrationNumber: null });
    const applicant = await h.http().get('/v1/applicants/reopen-co-2').set(h.auth(key)).expect(200);
    expect(applicant.body.lockedFields).toEqual(['companyName']);
  });
});

describe('company levels', () => {
  it('companyData carries the company keys; a claimed company value (request name country) is locked under its level key', async () => {
    await h.admin('post', `/products/${productId}/levels`, {
      name: 'KYB_WEB',
      applicantType: 'company',
      steps: [{ kind: 'company_data' }, { kind: 'company_documents' }],
      companyDataFields: [
        'companyName',
        'registrationNumber',
        'legalForm',
        'incorporatedOn',
        'registrationCountry',
      ],
      companyRequiredFields: ['companyName', 'registrationCountry', 'incorporatedOn'],
      companyLegalForms: ['gmbh', 'ag'],
      companyRequiredDocuments: ['certificate_of_incorporation'],
    });
    await h
      .http()
      .post('/v1/applicants')
      .set(h.auth(key))
      .send({
        externalUserId: 'co-1',
        type: 'company',
        verificationLevelName: 'KYB_WEB',
        companyName: 'Acme GmbH',
        country: 'DE',
      })
      .expect(201);
    const link = await h.http().post('/v1/applicants/co-1/verifications').set(h.auth(key)).expect(202);
    const { token } = (await h.http().get(`/api/v1/sdk/links/${link.body.shortCode}`).expect(200)).body;
    const res = await h.http().get('/api/v1/sdk/session').set(bearer(token)).expect(200);
    expect(res.body.applicantType).toBe('company');
    expect(res.body.personalInfo).toEqual({ enabled: [], required: [], values: {}, locked: [] });
    expect(res.body.companyData).toEqual({
      enabled: ['companyName', 'registrationNumber', 'legalForm', 'incorporatedOn', 'registrationCountry'],
      required: ['companyName', 'registrationCountry', 'incorporatedOn'],
      values: { companyName: 'Acme GmbH', registrationCountry: 'DE' },
      locked: ['companyName', 'registrationCountry'],
      legalForms: ['gmbh', 'ag'],
      requiredDocuments: ['certificate_of_incorporation'],
      documentsMinRequired: null,
    });
    const saved = await h
      .http()
      .post('/api/v1/sdk/personal-info')
      .set(bearer(token))
      .send({
        registrationCountry: 'FR',
        companyName: 'Acme GmbH',
        incorporatedOn: '2001-02-03',
        legalForm: 'gmbh',
        firstName: 'X',
      })
      .expect(200);
    expect(saved.body).toEqual({
      values: {
        companyName: 'Acme GmbH',
        registrationCountry: 'DE',
        incorporatedOn: '2001-02-03',
        legalForm: 'gmbh',
      },
      lockedFields: ['registrationCountry'],
    });
    await h.http().post('/api/v1/sdk/steps/company_data/submit').set(bearer(token)).expect(200);
    const info = await h.http().get('/v1/applicants/co-1/company-info').set(h.auth(key)).expect(200);
    expect(info.body).toMatchObject({ incorporationDate: '2001-02-03', legalForm: 'gmbh', country: 'DE' });
  });
});

describe('questionnaires', () => {
  it('operator: 201 with the questionnaire, 409 on a repeated id, 400 on bad questions and on a level naming an unknown one', async () => {
    const admin = (path: string) =>
      h
        .http()
        .post(`/admin/v1/products/${productId}${path}`)
        .set('authorization', `Bearer ${TEST_ADMIN_TOKEN}`);
    const created = await admin('/questionnaires')
      .send({ ...QUESTIONNAIRE, id: 'q2' })
      .expect(201);
    expect(created.body).toMatchObject({
      id: 'q2',
      title: 'Source of funds',
      createdAtUtc: expect.any(String),
    });
    expect(created.body.questions[0]).toEqual({ ...QUESTIONNAIRE.questions[0] });
    expect(created.body.questions[2]).toEqual({ ...QUESTIONNAIRE.questions[2], required: false });
    await admin('/questionnaires')
      .send({ ...QUESTIONNAIRE, id: 'q2' })
      .expect(409);
    const bad = [
      { id: 'q3', title: 'T', questions: [{ id: 'a', text: 'A', type: 'select' }] },
      { id: 'q3', title: 'T', questions: [{ id: 'a', text: 'A', type: 'colour' }] },
      { id: 'q3', title: 'T', questions: [] },
      {
        id: 'q3',
        title: 'T',
        questions: [
          { id: 'a', text: 'A', type: 'text' },
          { id: 'a', text: 'B', type: 'text' },
        ],
      },
    ];
    for (const body of bad) {
      const res = await admin('/questionnaires').send(body).expect(400);
      expect(res.body).toEqual({ message: expect.any(String) });
    }
    const level = await admin('/levels')
      .send({
        name: 'BAD_Q',
        applicantType: 'individual',
        steps: [{ kind: 'questionnaire' }],
        attachedQuestionnaireId: 'nope',
      })
      .expect(400);
    expect(level.body).toEqual({ message: 'attachedQuestionnaireId: questionnaire nope does not exist' });
  });

  it('answers are checked against the question types; missing lists required questions without an answer', async () => {
    const { token } = await session('q-1', 'FORMS_ONLY');
    const cases: [Record<string, unknown>, string][] = [
      [{ source: 'lottery' }, 'answers.source: must be one of the options'],
      [{ pep: 'yes' }, 'answers.pep: must be true or false'],
      [{ income: '10' }, 'answers.income: must be a number'],
      [{ since: '2020-13-45' }, 'answers.since: must be a date YYYY-MM-DD'],
      [{ markets: ['eu', 'asia'] }, 'answers.markets: must be an array of the options'],
      [{ unknown: 'x' }, 'answers.unknown: no such question'],
    ];
    for (const [answers, message] of cases) {
      const res = await h
        .http()
        .post('/api/v1/sdk/questionnaire')
        .set(bearer(token))
        .send({ answers })
        .expect(400);
      expect(res.body).toEqual({ message });
    }
    const partial = await h
      .http()
      .post('/api/v1/sdk/questionnaire')
      .set(bearer(token))
      .send({ answers: { source: 'salary', income: 52000, markets: ['eu', 'eu'] } })
      .expect(200);
    expect(partial.body).toEqual({
      answers: { source: 'salary', income: 52000, markets: ['eu'] },
      missing: ['pep'],
    });
    const step = await h.http().post('/api/v1/sdk/steps/questionnaire/submit').set(bearer(token)).expect(409);
    expect(step.body).toEqual({ message: 'questionnaire is incomplete: pep is missing' });
    const done = await h
      .http()
      .post('/api/v1/sdk/questionnaire')
      .set(bearer(token))
      .send({ answers: { pep: false, income: null } })
      .expect(200);
    expect(done.body).toEqual({ answers: { source: 'salary', pep: false, markets: ['eu'] }, missing: [] });
    await h.http().post('/api/v1/sdk/steps/questionnaire/submit').set(bearer(token)).expect(200);
  });

  it('a whitespace-only text answer is no answer: stored as none, a required question stays missing', async () => {
    await h.admin('post', `/products/${productId}/questionnaires`, {
      id: 'purpose',
      title: 'Purpose',
      questions: [
        { id: 'purpose', text: 'Purpose of the account', type: 'text', required: true },
        { id: 'note', text: 'Anything else', type: 'text' },
      ],
    });
    await h.admin('post', `/products/${productId}/levels`, {
      name: 'TEXT_Q',
      applicantType: 'individual',
      steps: [{ kind: 'questionnaire' }],
      attachedQuestionnaireId: 'purpose',
    });
    const { token } = await session('q-blank', 'TEXT_Q');
    const answer = (answers: Record<string, unknown>) =>
      h.http().post('/api/v1/sdk/questionnaire').set(bearer(token)).send({ answers }).expect(200);
    expect((await answer({ purpose: '   ', note: ' \t\n ' })).body).toEqual({
      answers: {},
      missing: ['purpose'],
    });
    const step = await h.http().post('/api/v1/sdk/steps/questionnaire/submit').set(bearer(token)).expect(409);
    expect(step.body).toEqual({ message: 'questionnaire is incomplete: purpose is missing' });
    // A stored answer is cleared by a blank one, like by null.
    expect((await answer({ purpose: ' Savings ', note: 'hi' })).body).toEqual({
      answers: { purpose: 'Savings', note: 'hi' },
      missing: [],
    });
    expect((await answer({ purpose: '  ' })).body).toEqual({ answers: { note: 'hi' }, missing: ['purpose'] });
    const session2 = await h.http().get('/api/v1/sdk/session').set(bearer(token)).expect(200);
    expect(session2.body.questionnaire).toMatchObject({ answers: { note: 'hi' }, missing: ['purpose'] });
  });
});

describe('a 503 tells the client when to retry (decision 0479)', () => {
  it('an upload while media storage is not configured (no INTERNAL_SERVICE_TOKEN here): 503 {message}, Retry-After: 1', async () => {
    const { token } = await session('unavailable-1', 'DOCS');
    const res = await h
      .http()
      .post('/api/v1/sdk/uploads/selfie')
      .set(bearer(token))
      .attach('file', mediaFixture('tiny.jpg'), 'selfie.jpg')
      .expect(503);
    expect(res.body).toEqual({ message: 'Media storage is not configured' });
    expect(res.headers['retry-after']).toBe('1');
    expect(res.headers['x-error-code']).toBeUndefined();
  });
});

describe('steps and submission', () => {
  it('a step moves to submitted only with its data; submit is 409 until every input step is in, then 202', async () => {
    const { token, enrollmentId } = await session('sub-1', 'FORMS_ONLY', { firstName: 'Ada' });
    const early = await h.http().post('/api/v1/sdk/submit').set(bearer(token)).expect(409);
    expect(early.body).toEqual({ message: 'Step personal_information is not submitted yet' });

    const incomplete = await h
      .http()
      .post('/api/v1/sdk/steps/personal_information/submit')
      .set(bearer(token))
      .expect(409);
    expect(incomplete.body).toEqual({ message: 'personal_information is incomplete: lastName is missing' });
    await completePersonalInfo(token);
    const step = await h
      .http()
      .post('/api/v1/sdk/steps/personal_information/submit')
      .set(bearer(token))
      .expect(200);
    expect(step.body.reviewStatus).toBe('submitted');
    await h.http().post('/api/v1/sdk/steps/aml/submit').set(bearer(token)).expect(409);
    await h.http().post('/api/v1/sdk/steps/selfie/submit').set(bearer(token)).expect(404);
    await h.http().post('/api/v1/sdk/steps/nonsense/submit').set(bearer(token)).expect(404);

    const stillMissing = await h.http().post('/api/v1/sdk/submit').set(bearer(token)).expect(409);
    expect(stillMissing.body).toEqual({ message: 'Step questionnaire is not submitted yet' });
    await h
      .http()
      .post('/api/v1/sdk/questionnaire')
      .set(bearer(token))
      .send({ answers: { source: 'savings', pep: false } })
      .expect(200);
    await h.http().post('/api/v1/sdk/steps/questionnaire/submit').set(bearer(token)).expect(200);

    const submitted = await h.http().post('/api/v1/sdk/submit').set(bearer(token)).expect(202);
    expect(submitted.body.enrollmentStatus).toBe('submitted');
    expect(
      submitted.body.steps.map((s: { kind: string; reviewStatus: string }) => [s.kind, s.reviewStatus]),
    ).toEqual([
      ['personal_information', 'submitted'],
      ['questionnaire', 'submitted'],
      ['aml', 'submitted'],
    ]);
    // A repeat answers the same and records nothing again; writes are closed.
    await h.http().post('/api/v1/sdk/submit').set(bearer(token)).expect(202);
    await h.http().post('/api/v1/sdk/personal-info').set(bearer(token)).send({ lastName: 'X' }).expect(409);

    const status = await h.http().get('/v1/applicants/sub-1/status').set(h.auth(key)).expect(200);
    expect(status.body.status).toBe('pending');
    const history = await h
      .http()
      .get('/v1/applicants/sub-1/review-history?eventType=enrollment.submitted')
      .set(h.auth(key))
      .expect(200);
    expect(history.body.items).toEqual([
      { atUtc: expect.any(String), eventType: 'enrollment.submitted', actorType: 'sdk' },
    ]);
    const pending = await h.sql<{ data: Record<string, unknown> }>(
      "SELECT data FROM outbox WHERE event_type = 'applicantPending' AND entity_id = (SELECT applicant_id::text FROM enrollments WHERE id = $1)",
      [enrollmentId],
    );
    expect(pending).toHaveLength(1);
    expect(pending[0].data).toMatchObject({ externalUserId: 'sub-1', levelName: 'FORMS_ONLY' });
    const session2 = await h.http().get('/api/v1/sdk/session').set(bearer(token)).expect(200);
    expect(session2.body.enrollmentStatus).toBe('submitted');
  });

  it('wakes the checks worker after a submit commits, with no NOTIFY inside the transaction (no trigger)', async () => {
    const listener = new Client({ connectionString: h.env.db.url });
    await listener.connect();
    let wakes = 0;
    listener.on('notification', (n) => {
      if (n.channel === CHECKS_CHANNEL) wakes += 1;
    });
    await listener.query(`LISTEN ${CHECKS_CHANNEL}`);
    const settle = () => new Promise((r) => setTimeout(r, 300));
    try {
      const { token } = await session('wake-1', 'FORMS_ONLY', { firstName: 'Ada' });
      await completePersonalInfo(token);
      await settle();
      expect(wakes).toBe(0); // saving data submits nothing
      await h.http().post('/api/v1/sdk/steps/personal_information/submit').set(bearer(token)).expect(200);
      await settle();
      expect(wakes).toBe(1);
      // A write that calls nothing wakes nothing any more: the triggers are gone (the worker's poll finds it).
      await h.sql(
        `UPDATE applicant_steps SET review_status = 'submitted', updated_at = now()
          WHERE applicant_id = (SELECT id FROM applicants WHERE external_user_id = 'wake-1')`,
      );
      await settle();
      expect(wakes).toBe(1);
    } finally {
      await listener.end();
    }
  });
});

describe('rate limits', () => {
  it('429 with Retry-After past the per-token limit, and past the per-IP limit for page loads; the token is never logged', async () => {
    const logs = new LogCapture();
    const small = await startHarness(
      {
        LOG_LEVEL: 'debug',
        LOG_REQUESTS: 'true',
        SDK_RATE_LIMIT_PER_TOKEN_PER_MINUTE: '3',
        SDK_RATE_LIMIT_PER_IP_PER_MINUTE: '6',
      },
      { logDestination: logs },
    );
    try {
      const { productId: pid, key: k } = await small.tenant();
      await small.admin('post', `/products/${pid}/levels`, { ...DOC_LEVEL, name: 'RL' });
      await small
        .http()
        .post('/v1/applicants')
        .set(small.auth(k))
        .send({ externalUserId: 'rl', verificationLevelName: 'RL' });
      const link = await small.http().post('/v1/applicants/rl/verifications').set(small.auth(k)).expect(202);
      const { token } = (await small.http().get(`/api/v1/sdk/links/${link.body.shortCode}`).expect(200)).body;
      for (let i = 0; i < 3; i++)
        await small.http().get('/api/v1/sdk/session').set(bearer(token)).expect(200);
      const limited = await small.http().get('/api/v1/sdk/session').set(bearer(token)).expect(429);
      expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
      // Five calls so far from this IP (the link resolve counts too): one more page load passes, the next is refused.
      await small.http().get(`/sdk/${link.body.shortCode}`).expect(200);
      const page = await small.http().get(`/sdk/${link.body.shortCode}`).expect(429);
      expect(page.headers['retry-after']).toBeDefined();
      // Every call above was logged (request lines included); the token, and its signature, never; nor the
      // short code that trades for a token (the page, the resolve, and a Referer on a refused call).
      await small
        .http()
        .get('/api/v1/sdk/session')
        .set('referer', `https://verify.example/sdk/${link.body.shortCode}?lang=en`)
        .expect(429);
      expect(logs.text).toContain('/api/v1/sdk/session');
      expect(logs.text).toContain('"url":"/sdk/[REDACTED]"');
      expect(logs.text).toContain('/api/v1/sdk/links/[REDACTED]');
      expect(logs.text).toContain('https://verify.example/sdk/[REDACTED]?lang=en');
      expect(logs.text).not.toContain(link.body.shortCode);
      expect(logs.text).not.toContain(token);
      expect(logs.text).not.toContain(token.split('.')[2]);
    } finally {
      await small.close();
    }
  });
});
