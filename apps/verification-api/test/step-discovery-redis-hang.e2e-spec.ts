import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { type TcpProxy, testRedisProxy, until } from '@tessera/testing';
import { startChecksWorker, submitSteps } from './checks-support';
import { type Credential, type Harness, startHarness } from './harness';

// The worker's shutdown while its step sweep waits on a hung Redis (decision 0492): the sweep read the submitted
// steps from Postgres and waits for its enqueue; the shutdown leaves it, and the steps stay submitted for the next
// worker, which checks them. Real worker, Postgres and Redis; the hang is a held TCP proxy.

/** The shutdown's probe waits 1 s for a PING (SHUTDOWN_PROBE_MS); the rest is the worker's own closing. */
const PROMPT_CLOSE_MS = 4000;

let h: Harness;
let key: Credential;
let proxy: TcpProxy;

beforeAll(async () => {
  h = await startHarness();
  let productId: string;
  ({ productId, key } = await h.tenant());
  await h.admin('post', `/products/${productId}/levels`, {
    name: 'PERSONAL',
    applicantType: 'individual',
    isDefault: true,
    personalInfoRequiredFields: ['firstName', 'lastName'],
    steps: [{ kind: 'personal_information' }],
  });
  proxy = await testRedisProxy();
}, 60_000);
afterAll(async () => {
  proxy?.release();
  await proxy?.close();
  await h?.close();
});

it('a worker stopped while its sweep waits on a hung Redis closes promptly; the next worker checks the step', async () => {
  const externalUserId = 'u-hang-sweep';
  const created = await h
    .http()
    .post('/v1/applicants')
    .set(h.auth(key))
    .send({ externalUserId, firstName: 'Emma', lastName: 'Lindqvist' })
    .expect(201);
  const session = await h
    .http()
    .post(`/v1/applicants/${externalUserId}/verifications`)
    .set(h.auth(key))
    .expect(202);
  const a = { id: created.body.id as string, enrollmentId: session.body.enrollmentId as string };

  const worker: NestFastifyApplication = await startChecksWorker(h, { REDIS_URL: proxy.url('redis') });
  proxy.hold();
  await submitSteps(h, a, ['personal_information']);
  // The sweep polls every 200 ms: it has found the step and waits for Redis well within this.
  await new Promise((r) => setTimeout(r, 1000));
  const started = Date.now();
  const closed = await Promise.race([
    worker.close().then(() => 'closed'),
    new Promise((r) => setTimeout(() => r('still closing'), 10_000)),
  ]);
  expect({ closed, promptly: Date.now() - started < PROMPT_CLOSE_MS }).toEqual({
    closed: 'closed',
    promptly: true,
  });
  proxy.release();

  const next = await startChecksWorker(h);
  try {
    const steps = await until(
      async () =>
        (await h.http().get(`/v1/applicants/${externalUserId}/steps`).set(h.auth(key)).expect(200)).body
          .steps as { kind: string; reviewStatus: string }[],
      (list) => list.every((s) => s.reviewStatus === 'completed'),
    );
    expect(steps).toEqual([
      expect.objectContaining({ kind: 'personal_information', reviewStatus: 'completed' }),
    ]);
  } finally {
    await next.close();
  }
}, 60_000);
