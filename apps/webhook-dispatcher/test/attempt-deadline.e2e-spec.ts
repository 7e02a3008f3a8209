import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { WEBHOOK_RPC } from '@tessera/contracts';
import type { TestEnvironment } from '@tessera/testing';
import { DataSource } from 'typeorm';
import { dnsResolver } from '../src/modules/deliveries/egress-guard';
import { TestDnsServer } from './support/dns-server';
import { dispatcherWithReceiver, enqueue, event, rpc } from './support/harness';
import { type HttpsReceiver, waitFor } from './support/https-receiver';

/**
 * The contract's "5 s timeout per attempt" bounds the whole attempt, the DNS check before the request included
 * (decision 0497): they had WEBHOOK_TIMEOUT_MS each, so a slow DNS and a slow receiver together made an attempt
 * of up to twice the bound, delivered. A real DNS server on loopback answers one host slowly; the suite's bound
 * is 1 s, and the DNS and the receiver each take 0.6 s of it.
 */

const TIMEOUT_MS = 1000;
const SLOW_MS = 600;

let env: TestEnvironment;
let app: NestFastifyApplication;
let receiver: HttpsReceiver;
let db: DataSource;
const dns = new TestDnsServer({
  'receiver.test': { a: ['127.0.0.1'], delayMs: SLOW_MS },
  'flaky.test': { a: ['127.0.0.1'] },
  'slower.test': { a: ['127.0.0.1'], delayMs: 1500 },
});

beforeAll(async () => {
  await dns.start();
  ({ env, app, receiver } = await dispatcherWithReceiver(
    { WEBHOOK_POLL_MS: '20', WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS) },
    dnsResolver({ servers: [dns.server], timeoutMs: 2000, tries: 1 }),
  ));
  db = app.get(DataSource);
});

afterAll(async () => {
  await app?.close();
  await env?.teardown();
  await receiver?.stop();
  await dns.stop();
});

type Attempt = { success: boolean; httpStatusCode: number | null; errorMessage: string | null };

/** The first attempt of an event sent to `host`, whose receiver answers after SLOW_MS. */
async function firstAttempt(tenantId: string, host: string): Promise<Attempt> {
  const path = `/${tenantId}`;
  receiver.on(path, { status: 200, delayMs: SLOW_MS });
  const put = await rpc(app, WEBHOOK_RPC.PUT_ENDPOINT, {
    tenantId,
    source: 'custody',
    body: { url: receiver.url(path, host) },
  });
  expect(put.ok).toBe(true);
  const e = event({ tenantId });
  await enqueue(app, e);
  const row = await waitFor(
    async () =>
      (
        await db.query(
          `SELECT a.success, a.http_status_code AS "httpStatusCode", a.error_message AS "errorMessage"
             FROM webhook_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id
            WHERE d.event_id = $1 AND a.attempt_number = 1`,
          [e.eventId],
        )
      )[0] as Attempt | undefined,
    (r) => Boolean(r),
  );
  return row!;
}

it('a receiver that answers within the bound, its host resolved at once, is delivered', async () => {
  expect(await firstAttempt('tenant-quick-dns', 'flaky.test')).toMatchObject({
    success: true,
    httpStatusCode: 200,
  });
});

it('the same receiver behind a slow DNS overruns the attempt: a failed attempt, timed out', async () => {
  const attempt = await firstAttempt('tenant-slow-dns', 'receiver.test');
  expect(attempt).toMatchObject({ success: false, httpStatusCode: null });
  // The attempt's bound, DNS included: the request itself had only what the DNS check left of it.
  expect(attempt.errorMessage).toBe(`timed out after ${TIMEOUT_MS} ms`);
});

it('a DNS slower than the whole bound is given up at the bound: a failed attempt, retried', async () => {
  const attempt = await firstAttempt('tenant-slower-dns', 'slower.test');
  expect(attempt).toMatchObject({
    success: false,
    httpStatusCode: null,
    errorMessage: 'target refused: host slower.test does not resolve (DNS timeout)',
  });
  expect(receiver.at('/tenant-slower-dns')).toHaveLength(0);
  // Transient, as any DNS failure: the delivery is retried, not dead at once.
  const retried = await waitFor(
    async () =>
      Number(
        (
          await db.query(
            `SELECT count(*) AS n FROM webhook_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id
              JOIN webhook_endpoints e ON e.id = d.endpoint_id WHERE e.tenant_id = 'tenant-slower-dns'`,
          )
        )[0].n,
      ),
    (n) => n >= 2,
  );
  expect(retried).toBeGreaterThanOrEqual(2);
});
