import {
  type DispatcherProcess,
  describeFuzzVerdict,
  fuzzApi,
  type FuzzReport,
  startDispatcherProcess,
  SETUP_HOOK_TIMEOUT_MS,
} from '@tessera/testing';
import type { Credential, Harness } from './harness';
import { type MediaHarness, startMediaHarness } from './media';

/**
 * Issue 15, fuzz suite: 10,000 generated requests (fixed seed FUZZ_SEED, printed) over every route of the
 * verification API's route table, with a valid partner credential so the handlers are reached. Zero 5xx;
 * every 4xx is exactly `{message}`.
 */
const SEED = Number(process.env.FUZZ_SEED ?? 1795290015);
const RUNS = Number(process.env.FUZZ_RUNS ?? 10_000);

let h: Harness;
/** The real media-store answers the resource routes (RPC and bytes), as in production. */
let media: MediaHarness;
/** The real dispatcher answers the webhook routes over RPC, as in production. */
let dispatcher: DispatcherProcess;
let key: Credential;
const known: string[] = ['basic-kyc', 'production', 'sandbox', 'individual', 'company', 'identity', 'selfie'];

beforeAll(async () => {
  media = await startMediaHarness(
    {},
    { RATE_LIMIT_PER_CREDENTIAL_PER_MINUTE: '10000000', LOG_LEVEL: 'silent' },
  );
  h = media.h;
  dispatcher = await startDispatcherProcess(h.env.env);
  ({ key } = await h.tenant('Fuzz'));
  const created = await h
    .http()
    .post('/v1/applicants')
    .set(h.auth(key))
    .send({ externalUserId: 'fuzz-user-1', levelName: 'basic-kyc' });
  if (created.body?.id) known.push(created.body.id);
  known.push('fuzz-user-1');
}, SETUP_HOOK_TIMEOUT_MS);
afterAll(async () => {
  await dispatcher?.stop();
  await media?.close();
});

describe('issue 15 regressions: a NUL in a path parameter is a 400 {message}, not a 500', () => {
  it.each([
    ['get', '/v1/levels/%00'],
    ['get', '/v1/applicants/a%00b/status'],
    ['post', '/v1/applicants/%00/verifications'],
  ] as const)('%s %s', async (method, path) => {
    const agent = h.http();
    const res = await (method === 'post' ? agent.post(path).send({}) : agent.get(path)).set(h.auth(key));
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ message: 'The path contains a NUL character or invalid Unicode' });
  });
});

describe('fuzz', () => {
  let report: FuzzReport;

  beforeAll(async () => {
    report = await fuzzApi({
      app: h.app,
      shape: 'verification',
      runs: RUNS,
      seed: SEED,
      exclude: (r) => r.url.startsWith('/admin'),
      knownValues: known,
      fieldNames: [
        'externalUserId',
        'levelName',
        'type',
        'email',
        'phone',
        'lang',
        'info',
        'fixedInfo',
        'firstName',
        'lastName',
        'dob',
        'country',
        'companyName',
        'registrationNumber',
        'successUrl',
        'errorUrl',
        'returnUrl',
        'ttlInSecs',
        'take',
        'cursor',
        'beneficiaries',
        'steps',
        'reviewAnswer',
      ],
      authenticate: () => h.auth(key),
    });
  }, 900_000);

  describeFuzzVerdict(() => report, {
    runs: RUNS,
    seed: SEED,
    shapeTitle: "exactly {message}, the verification contract's shape",
    max401Share: 0.3,
    afterwards: () => h.http().get('/v1/levels').set(h.auth(key)).expect(200),
  });
});
