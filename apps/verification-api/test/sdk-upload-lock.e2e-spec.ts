import { mediaFixture as fixture, SETUP_HOOK_TIMEOUT_MS } from '@tessera/testing';
import type { TcpProxy } from '@tessera/testing';
import type { AddressInfo } from 'node:net';
import type { Harness } from './harness';
import {
  enrolledApplicant,
  filesUnder,
  handUpload,
  type MediaHarness,
  pause,
  startMediaHarness,
} from './media';

// An SDK upload takes the applicant's lock only for its short commit (decision 0457): while its bytes stream
// in from the end user or on to media-store, the partner's writes to the same applicant go through. Against the
// real media-store, behind a TCP proxy that can stall it.

let m: MediaHarness;
let h: Harness;
let proxy: TcpProxy;
let port: number;

const PNG = fixture('tiny.png');
const QUOTA = 2;

beforeAll(async () => {
  m = await startMediaHarness({ MEDIA_MAX_UPLOADS_PER_SLOT: String(QUOTA) }, {}, { proxied: true });
  h = m.h;
  proxy = m.proxy as TcpProxy;
  await h.app.listen(0, '127.0.0.1');
  port = (h.app.getHttpServer().address() as AddressInfo).port;
}, SETUP_HOOK_TIMEOUT_MS);
afterAll(() => m?.close());
afterEach(() => proxy.release());

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

const rows = async (enrollmentId: string) =>
  Number(
    (
      await h.sql<{ n: string }>('SELECT count(*) AS n FROM media.resources WHERE enrollment_id = $1', [
        enrollmentId,
      ])
    )[0].n,
  );

/** A partner write that takes the applicant's lock; resolves with how long it took. */
async function partnerWrite(a: Awaited<ReturnType<typeof enrolledApplicant>>, firstName: string) {
  const started = Date.now();
  await h
    .http()
    .patch(`/v1/applicants/${a.externalUserId}/personal-info`)
    .set(h.auth(a.key))
    .send({ firstName })
    .expect(200);
  return Date.now() - started;
}

describe('an SDK upload in flight', () => {
  it('does not hold up a partner write while the end user is still sending it', async () => {
    const a = await enrolledApplicant(h, 'lock-slow-client');
    const upload = handUpload(port, a.token, 'selfie').file(PNG.subarray(0, 40));
    await pause(300);
    expect(await partnerWrite(a, 'Ada')).toBeLessThan(2000);
    upload.write(PNG.subarray(40));
    expect((await upload.end()).status).toBe(201);
  });

  it('does not hold up a partner write while media-store is still taking it in', async () => {
    const a = await enrolledApplicant(h, 'lock-slow-media');
    proxy.hold();
    const upload = handUpload(port, a.token, 'selfie').file(PNG);
    const answer = upload.end();
    // The whole body has reached verification-api; media-store has not seen its end.
    await pause(500);
    const write = partnerWrite(a, 'Grace');
    const first = await Promise.race([write.then(() => 'write'), pause(3000).then(() => 'stalled')]);
    proxy.release();
    expect(first).toBe('write');
    expect((await answer).status).toBe(201);
    expect(await rows(a.enrollmentId)).toBe(1);
  });

  it('is refused, and nothing of it is kept, when the verification was submitted while it streamed', async () => {
    const tenant = await h.tenant();
    await h.admin('post', `/products/${tenant.productId}/levels`, {
      name: 'SELFIE_ONLY',
      applicantType: 'individual',
      isDefault: true,
      steps: [{ kind: 'selfie' }],
    });
    const a = await enrolledApplicant(h, 'lock-submitted', tenant);
    const sdk = (path: string) => h.http().post(`/api/v1/sdk/${path}`).set(bearer(a.token));
    await sdk('uploads/selfie').attach('file', PNG, 'selfie.png').expect(201);
    await sdk('steps/selfie/submit').expect(200);
    const before = filesUnder(m.media.fsRoot).length;
    proxy.hold();
    const answer = handUpload(port, a.token, 'selfie').file(PNG).end();
    // The whole body has reached verification-api; media-store has not seen its end.
    await pause(500);
    const submit = sdk('submit');
    const first = await Promise.race([submit.then(() => 'submitted'), pause(3000).then(() => 'stalled')]);
    proxy.release();
    expect(first).toBe('submitted');
    expect((await submit).status).toBe(202);
    const refused = await answer;
    expect(refused).toEqual({ status: 409, body: { message: expect.any(String) } });
    expect(await rows(a.enrollmentId)).toBe(1);
    // The bytes media-store took in were thrown away with the refusal.
    expect(filesUnder(m.media.fsRoot).length).toBe(before);
  });

  it('keeps the slot quota when uploads to one slot commit together', async () => {
    const a = await enrolledApplicant(h, 'lock-quota-race');
    proxy.hold();
    const answers = [1, 2, 3, 4].map(() => handUpload(port, a.token, 'selfie').file(PNG).end());
    await pause(500);
    proxy.release();
    const statuses = (await Promise.all(answers)).map((r) => r.status).sort();
    expect(statuses).toEqual([201, 201, 409, 409]);
    expect(await rows(a.enrollmentId)).toBe(QUOTA);
    const active = await h.sql<{ n: string }>(
      'SELECT count(*) AS n FROM media.resources WHERE enrollment_id = $1 AND active',
      [a.enrollmentId],
    );
    expect(Number(active[0].n)).toBe(1);
    // The session lists the slot's latest upload: the active one.
    const session = await h.http().get('/api/v1/sdk/session').set(bearer(a.token)).expect(200);
    const selfie = (session.body.steps as { kind: string; uploads: { slot: string }[] }[]).find(
      (s) => s.kind === 'selfie',
    );
    expect(selfie?.uploads).toEqual([expect.objectContaining({ slot: 'selfie' })]);
  });
});
