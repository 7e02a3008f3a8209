import { type DispatcherProcess, startDispatcherProcess } from '@tessera/testing';
import { type Harness, startHarness } from './harness';

let h: Harness;
let dispatcher: DispatcherProcess;

beforeAll(async () => {
  h = await startHarness();
  dispatcher = await startDispatcherProcess(h.env.env);
}, 60_000);

afterAll(async () => {
  await dispatcher?.stop();
  await h?.close();
});

describe('verification webhook configuration, served by the real dispatcher over RPC', () => {
  it('PUT /v1/webhooks shows the secret once; GET never; each product sees only its own', async () => {
    const a = await h.tenant('A');
    const b = await h.tenant('B');
    const put = await h
      .http()
      .put('/v1/webhooks')
      .set(h.auth(a.key))
      .send({ url: 'https://127.0.0.1:9/kyc' })
      .expect(200);
    expect(put.body).toMatchObject({ url: 'https://127.0.0.1:9/kyc', isConfigured: true });
    expect(put.body.signingSecret).toMatch(/^whsec_/);
    const get = await h.http().get('/v1/webhooks').set(h.auth(a.key)).expect(200);
    expect(get.body.signingSecret).toBeNull();
    const other = await h.http().get('/v1/webhooks').set(h.auth(b.key)).expect(200);
    expect(other.body.isConfigured).toBe(false);
  });

  it('needs credentials: 401 {message} without them', async () => {
    const res = await h.http().get('/v1/webhooks').expect(401);
    expect(Object.keys(res.body)).toEqual(['message']);
  });
});
