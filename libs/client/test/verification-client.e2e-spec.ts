import {
  constructWebhookEvent,
  createVerificationClient,
  type RetryEvent,
  TesseraApiError,
  verifyWebhook,
} from '../src';
import {
  adminPost,
  type FaultProxy,
  recordingLogger,
  recordingSleep,
  type Stack,
  startFaultProxy,
  startStack,
  until,
} from './support';

interface Credential {
  apiKey: string;
  apiSecret: string;
  environment: 'production' | 'sandbox';
}

let stack: Stack;
let proxy: FaultProxy;
let production: Credential;
let sandbox: Credential;

beforeAll(async () => {
  stack = await startStack('verification');
  proxy = await startFaultProxy(stack.verificationUrl!);
  const url = stack.verificationUrl!;
  const product = await adminPost<{ id: string }>(url, '/admin/v1/products', { name: 'Client SDK' });
  production = await adminPost(url, `/admin/v1/products/${product.id}/keys`, { environment: 'production' });
  sandbox = await adminPost(url, `/admin/v1/products/${product.id}/keys`, { environment: 'sandbox' });
  await adminPost(url, `/admin/v1/products/${product.id}/levels`, {
    name: 'BASIC_KYC',
    applicantType: 'individual',
    isDefault: true,
    steps: [{ kind: 'personal_information' }, { kind: 'identity_doc' }],
  });
}, 300_000);

afterAll(async () => {
  await proxy?.close();
  await stack?.close();
}, 60_000);

function clientThroughProxy(credential: Credential = production, apiSecret = credential.apiSecret) {
  const sleep = recordingSleep();
  const logger = recordingLogger();
  const retries: RetryEvent[] = [];
  const client = createVerificationClient({
    baseUrl: proxy.url,
    apiKey: credential.apiKey,
    apiSecret,
    environment: credential.environment,
    sleep: sleep.sleep,
    logger,
    random: () => 0.5,
    onRetry: (e) => retries.push(e),
  });
  return { client, delays: sleep.delays, logger, retries };
}

const newRequests = (from: number) => proxy.requests.slice(from);

describe('verification client: credentials and calls', () => {
  it('sends the three credential headers and reads levels and applicants', async () => {
    const { client } = clientThroughProxy();
    const from = proxy.requests.length;
    const levels = await client.levels.list();
    expect(levels.items.map((l) => l.name)).toEqual(['BASIC_KYC']);
    expect(levels.totalItems).toBe(1);
    const level = await client.levels.get('BASIC_KYC');
    expect(level).toMatchObject({ name: 'BASIC_KYC', applicantType: 'individual', isDefault: true });

    const created = await client.applicants.create({ externalUserId: 'user-1', firstName: 'Ada' });
    const again = await client.applicants.create({ externalUserId: 'user-1' });
    expect(again.id).toBe(created.id);
    const status = await client.applicants.status('user-1');
    expect(status).toMatchObject({ externalUserId: 'user-1', applicantId: created.id });
    const steps = await client.applicants.steps('user-1');
    expect(steps.steps.map((s) => s.kind)).toEqual(expect.arrayContaining(['identity_doc']));

    for (const r of newRequests(from)) {
      expect(r.headers['x-api-key']).toBe(production.apiKey);
      expect(r.headers['x-api-secret']).toBe(production.apiSecret);
      expect(r.headers['x-environment']).toBe('production');
    }
  });

  it('surfaces errors in the contract shape, without retrying a 401 or a 400', async () => {
    const { client: wrong } = clientThroughProxy(production, 'not-the-secret');
    const from = proxy.requests.length;
    const unauthorized = (await wrong.levels.list().catch((e) => e)) as TesseraApiError;
    expect(unauthorized).toBeInstanceOf(TesseraApiError);
    expect(unauthorized.status).toBe(401);
    expect(unauthorized.body).toEqual({ message: expect.any(String) });
    expect(newRequests(from)).toHaveLength(1);

    const { client } = clientThroughProxy();
    const missing = (await client.applicants.create({} as never).catch((e) => e)) as TesseraApiError;
    expect(missing.status).toBe(400);
    expect(missing.message).toMatch(/externalUserId/);
    const notFound = (await client.applicants.status('nobody').catch((e) => e)) as TesseraApiError;
    expect(notFound.status).toBe(404);
  });
});

describe('verification client: back-off', () => {
  it('sleeps Retry-After on 429 and logs each one', async () => {
    const { client, delays, logger } = clientThroughProxy();
    proxy.inject({
      status: 429,
      headers: { 'retry-after': '1' },
      times: 3,
      match: (r) => r.url === '/v1/levels',
    });
    await expect(client.levels.list()).resolves.toMatchObject({ totalItems: 1 });
    expect(delays).toEqual([1000, 1000, 1000]);
    expect(logger.lines.filter((l) => l.details.status === 429)).toHaveLength(3);
    expect(JSON.stringify(logger.lines)).not.toContain(production.apiSecret);
  });

  it('retries POST /v1/applicants (idempotent on externalUserId) through 502/503/504: one applicant', async () => {
    const { client, delays, retries } = clientThroughProxy();
    const from = proxy.requests.length;
    const isCreate = (r: { url: string; method: string }) =>
      r.url === '/v1/applicants' && r.method === 'POST';
    proxy.inject({ status: 502, times: 1, afterForwarding: true, match: isCreate });
    proxy.inject({ status: 503, times: 1, afterForwarding: true, match: isCreate });
    proxy.inject({ status: 504, times: 1, afterForwarding: true, match: isCreate });
    const applicant = await client.applicants.create({
      externalUserId: 'user-retried',
      email: 'a@example.com',
    });
    expect(newRequests(from).map((r) => r.answered)).toEqual([502, 503, 504, 200]);
    expect(delays).toEqual([1000, 2000, 4000]);
    expect(retries.map((r) => r.status)).toEqual([502, 503, 504]);
    const read = await client.applicants.get('user-retried');
    expect(read.id).toBe(applicant.id);
    const history = await client.applicants.reviewHistory('user-retried', { eventType: 'applicant.created' });
    expect(history.totalItems).toBe(1);
  });

  it('does not retry a session link mint (non-idempotent POST) on 503', async () => {
    const { client, delays } = clientThroughProxy();
    await client.applicants.create({ externalUserId: 'user-session' });
    const from = proxy.requests.length;
    proxy.inject({ status: 503, times: 1, match: (r) => r.url.includes('/verification-sessions') });
    const err = (await client.applicants
      .createSession('user-session', { verificationLevelName: 'BASIC_KYC' })
      .catch((e) => e)) as TesseraApiError;
    expect(err.status).toBe(503);
    expect(newRequests(from)).toHaveLength(1);
    expect(delays).toEqual([]);
    const link = await client.applicants.createSession('user-session', {
      verificationLevelName: 'BASIC_KYC',
      theme: 'dark',
    });
    expect(link.url).toContain(link.shortCode);
  });
});

describe('verification client: webhooks', () => {
  it('verifies a real applicantReviewed delivery from the dispatcher and refuses a tampered one', async () => {
    const { client } = clientThroughProxy(sandbox);
    const config = await client.webhooks.configure({ url: stack.receiver.url });
    const secret = config.signingSecret!;
    expect(secret).toMatch(/^whsec_/);
    await client.applicants.create({ externalUserId: 'sbx-1' });
    await client.sandbox.review('sbx-1', { reviewAnswer: 'GREEN' });

    const deliveries = await until(
      () => stack.receiver.deliveries,
      (list) => list.some((d) => d.body.includes('"applicantReviewed"') && d.body.includes('sbx-1')),
    );
    const reviewed = deliveries.find((d) => d.body.includes('"applicantReviewed"'))!;
    const envelope = constructWebhookEvent<{
      externalUserId: string;
      reviewResult: { reviewAnswer: string };
    }>({
      secret,
      rawBody: reviewed.body,
      headers: reviewed.headers,
    });
    expect(envelope.eventType).toBe('applicantReviewed');
    expect(envelope.data).toMatchObject({ externalUserId: 'sbx-1', reviewResult: { reviewAnswer: 'GREEN' } });

    const tampered = reviewed.body.replace('"GREEN"', '"RED"');
    expect(tampered).not.toBe(reviewed.body);
    expect(verifyWebhook({ secret, rawBody: tampered, headers: reviewed.headers }).ok).toBe(false);
    expect(verifyWebhook({ secret, rawBody: reviewed.body, headers: {} })).toEqual({
      ok: false,
      reason: 'no signature header',
    });
  });
});
