import { mediaFixture as fixture, SETUP_HOOK_TIMEOUT_MS } from '@tessera/testing';
import type { Credential, Harness } from './harness';
import { type MediaHarness, startMediaHarness } from './media';

// `GET /api/v1/sdk/session` lists, on each step still open, the slots that already hold an accepted upload
// (decision 0447), so a reloaded page does not ask for them again. Against the real media-store.

let m: MediaHarness;
let h: Harness;
let key: Credential;

const PNG = fixture('tiny.png');
const JPEG = fixture('tiny.jpg');
const PDF = fixture('tiny.pdf');

beforeAll(async () => {
  m = await startMediaHarness();
  h = m.h;
  let productId: string;
  ({ productId, key } = await h.tenant());
  await h.admin('post', `/products/${productId}/levels`, {
    name: 'UPLOADS',
    applicantType: 'individual',
    steps: [{ kind: 'personal_information' }, { kind: 'identity_doc' }, { kind: 'selfie' }, { kind: 'poa' }],
    personalInfoFields: ['firstName'],
    personalInfoRequiredFields: [],
  });
  await h.admin('post', `/products/${productId}/levels`, {
    name: 'UPLOADS_KYB',
    applicantType: 'company',
    steps: [{ kind: 'company_documents' }],
    companyRequiredDocuments: ['certificate_of_incorporation'],
    companyDocumentsMinRequired: 2,
  });
}, SETUP_HOOK_TIMEOUT_MS);
afterAll(() => m?.close());

/** A new applicant on `level` and the SDK token of a fresh link. */
async function session(externalUserId: string, level = 'UPLOADS', type?: string) {
  await h
    .http()
    .post('/v1/applicants')
    .set(h.auth(key))
    .send({ externalUserId, verificationLevelName: level, ...(type ? { type, companyName: 'Acme' } : {}) })
    .expect(201);
  return link(externalUserId, level);
}

/** The SDK token of a new link for an existing applicant (it replaces the previous link). */
async function link(externalUserId: string, level = 'UPLOADS') {
  const minted = await h
    .http()
    .post(`/v1/applicants/${externalUserId}/verification-sessions?verificationLevelName=${level}`)
    .set(h.auth(key))
    .expect(202);
  return (await h.http().get(`/api/v1/sdk/links/${minted.body.shortCode}`).expect(200)).body.token as string;
}

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

const upload = (token: string, slot: string, file: Buffer, fields: Record<string, string> = {}) => {
  const req = h.http().post(`/api/v1/sdk/uploads/${slot}`).set(bearer(token));
  for (const [name, value] of Object.entries(fields)) void req.field(name, value);
  return req.attach('file', file, 'upload.bin');
};

/** The session's `uploads` of each step, by kind. */
async function uploadsByStep(token: string): Promise<Record<string, unknown[]>> {
  const res = await h.http().get('/api/v1/sdk/session').set(bearer(token)).expect(200);
  return Object.fromEntries(
    (res.body.steps as { kind: string; uploads: unknown[] }[]).map((s) => [s.kind, s.uploads]),
  );
}

const listed = (slot: string, mime: string, extra: Record<string, string | null> = {}) => ({
  slot,
  documentType: null,
  side: null,
  kind: mime === 'application/pdf' ? 'pdf' : 'image',
  mime,
  addedAtUtc: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
  ...extra,
});

describe('GET /api/v1/sdk/session: uploads of the open steps', () => {
  it('each slot of an open media step lists its latest accepted upload; a refused one changes nothing; form steps list none', async () => {
    const token = await session('up-1');
    expect(await uploadsByStep(token)).toEqual({
      personal_information: [],
      identity_doc: [],
      selfie: [],
      poa: [],
    });
    await upload(token, 'document_front', PNG, { documentType: 'id_card', side: 'front' }).expect(201);
    await upload(token, 'document_back', PNG, { documentType: 'id_card', side: 'back' }).expect(201);
    await upload(token, 'selfie', PNG).expect(201);
    // Replaced: the newer one is listed, once.
    await upload(token, 'selfie', JPEG).expect(201);
    // Refused (a PDF is no selfie): the stored one stays listed.
    await upload(token, 'selfie', PDF).expect(415);
    expect(await uploadsByStep(token)).toEqual({
      personal_information: [],
      identity_doc: [
        listed('document_front', 'image/png', { documentType: 'id_card', side: 'front' }),
        listed('document_back', 'image/png', { documentType: 'id_card', side: 'back' }),
      ],
      selfie: [listed('selfie', 'image/jpeg')],
      poa: [],
    });
  });

  it('a submitted step lists nothing, and neither does a submitted verification', async () => {
    const token = await session('up-2');
    await upload(token, 'document_front', PNG, { documentType: 'passport', side: 'front' }).expect(201);
    await upload(token, 'selfie', PNG).expect(201);
    await upload(token, 'additional', PDF, { documentType: 'proof_of_address' }).expect(201);
    await h.http().post('/api/v1/sdk/steps/identity_doc/submit').set(bearer(token)).expect(200);
    expect(await uploadsByStep(token)).toEqual({
      personal_information: [],
      identity_doc: [],
      selfie: [listed('selfie', 'image/png')],
      poa: [listed('additional', 'application/pdf', { documentType: 'proof_of_address' })],
    });
    for (const kind of ['personal_information', 'selfie', 'poa']) {
      await h.http().post(`/api/v1/sdk/steps/${kind}/submit`).set(bearer(token)).expect(200);
    }
    await h.http().post('/api/v1/sdk/submit').set(bearer(token)).expect(202);
    const after = await uploadsByStep(token);
    expect(Object.values(after).flat()).toEqual([]);
  });

  it("never another applicant's, and a new link starts with empty slots", async () => {
    const token = await session('up-3');
    await upload(token, 'selfie', PNG).expect(201);
    expect((await uploadsByStep(token)).selfie).toHaveLength(1);
    const other = await session('up-4');
    expect((await uploadsByStep(other)).selfie).toEqual([]);
    // A new link is a new verification: its slots are empty (the first link's token stops working).
    const fresh = await link('up-3');
    expect((await uploadsByStep(fresh)).selfie).toEqual([]);
    await h.http().get('/api/v1/sdk/session').set(bearer(token)).expect(401);
  });

  it('company documents: the latest of each document type, in type order; an untyped one only while it is the newest', async () => {
    const token = await session('up-kyb', 'UPLOADS_KYB', 'company');
    await upload(token, 'company_doc', PDF).expect(201);
    expect((await uploadsByStep(token)).company_documents).toEqual([
      listed('company_doc', 'application/pdf'),
    ]);
    await upload(token, 'company_doc', PDF, { documentType: 'other_1' }).expect(201);
    await upload(token, 'company_doc', PDF, { documentType: 'certificate_of_incorporation' }).expect(201);
    await upload(token, 'company_doc', PNG, { documentType: 'other_1' }).expect(201);
    expect((await uploadsByStep(token)).company_documents).toEqual([
      listed('company_doc', 'application/pdf', { documentType: 'certificate_of_incorporation' }),
      listed('company_doc', 'image/png', { documentType: 'other_1' }),
    ]);
    // What the page shows as done is what the step submit accepts.
    await h.http().post('/api/v1/sdk/steps/company_documents/submit').set(bearer(token)).expect(200);
  });

  it('read from the enrollment, not from media-store: with media-store frozen the session still lists them', async () => {
    const token = await session('up-5');
    await upload(token, 'selfie', PNG).expect(201);
    // A frozen media-store answers nothing: a session that asked it would hang.
    m.media.child.kill('SIGSTOP');
    try {
      expect((await uploadsByStep(token)).selfie).toEqual([listed('selfie', 'image/png')]);
    } finally {
      m.media.child.kill('SIGCONT');
    }
  });
});

describe('a slot no step of the level uses is refused, nothing stored (decision 0483)', () => {
  const resources = async (externalUserId: string) =>
    (await h.http().get(`/v1/applicants/${externalUserId}/resources`).set(h.auth(key)).expect(200)).body
      .items as { slot: string }[];

  it('an individual level without liveness or company documents: liveness_video and company_doc are 400', async () => {
    const token = await session('unused-slot-1');
    for (const [slot, file] of [
      ['liveness_video', fixture('tiny.webm')],
      ['company_doc', PDF],
    ] as const) {
      const res = await upload(token, slot, file);
      expect([res.status, res.body]).toEqual([
        400,
        {
          message: `Slot ${slot} is not used by this verification level; expected one of document_front, document_back, selfie, additional`,
        },
      ]);
      expect(res.headers['x-error-code']).toBeUndefined();
    }
    expect(await resources('unused-slot-1')).toEqual([]);
    // The slots the level's steps use still take their files.
    await upload(token, 'selfie', JPEG).expect(201);
    await upload(token, 'additional', PDF).expect(201);
    expect((await resources('unused-slot-1')).map((r) => r.slot).sort()).toEqual(['additional', 'selfie']);
  });

  it('a company level with only company documents: a selfie or a document side is 400', async () => {
    const token = await session('unused-slot-2', 'UPLOADS_KYB', 'company');
    for (const slot of ['selfie', 'document_front', 'additional']) {
      const res = await upload(token, slot, JPEG);
      expect([res.status, res.body]).toEqual([
        400,
        { message: `Slot ${slot} is not used by this verification level; expected one of company_doc` },
      ]);
    }
    expect(await resources('unused-slot-2')).toEqual([]);
    await upload(token, 'company_doc', PDF, { documentType: 'certificate_of_incorporation' }).expect(201);
  });
});
