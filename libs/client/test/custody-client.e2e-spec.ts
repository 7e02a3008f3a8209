import {
  createCustodyClient,
  type CustodyClient,
  type RetryEvent,
  TesseraApiError,
  verifyWebhook,
  constructWebhookEvent,
  SequenceReorderer,
  type WebhookEnvelope,
} from '../src';
import {
  adminPost,
  type FaultProxy,
  recordingLogger,
  recordingSleep,
  type Stack,
  startCustodyReplica,
  startFaultProxy,
  startStack,
  until,
} from './support';

const BTC = 'a0000000-0000-4000-8000-000000000001';
let stack: Stack;
let proxy: FaultProxy;
let key: { apiKey: string; apiSecret: string };

beforeAll(async () => {
  stack = await startStack('custody');
  proxy = await startFaultProxy(stack.custodyUrl!);
  const tenant = await adminPost<{ id: string }>(stack.custodyUrl!, '/admin/tenants', { name: 'Client SDK' });
  key = await adminPost(stack.custodyUrl!, `/admin/tenants/${tenant.id}/keys`, {
    environment: 'test',
    // The operator API's preset for every scope a test key may carry.
    scopes: 'all',
  });
}, 300_000);

afterAll(async () => {
  await proxy?.close();
  await stack?.close();
}, 60_000);

/** A client through the fault proxy, with recorded sleeps, log lines and retry events. */
function clientThroughProxy(extra: Partial<Parameters<typeof createCustodyClient>[0]> = {}) {
  const sleep = recordingSleep();
  const logger = recordingLogger();
  const retries: RetryEvent[] = [];
  const client = createCustodyClient({
    baseUrl: proxy.url,
    apiKey: key.apiKey,
    apiSecret: key.apiSecret,
    sleep: sleep.sleep,
    logger,
    random: () => 0.5,
    onRetry: (e) => retries.push(e),
    ...extra,
  });
  return { client, delays: sleep.delays, logger, retries };
}

const newRequests = (from: number) => proxy.requests.slice(from);

async function fundedWallets(client: CustodyClient, amount: string) {
  const vault = await client.vaults.create({
    externalId: `v-${Math.random().toString(36).slice(2)}`,
    name: 'Ops',
  });
  const source = await client.wallets.create(vault.id, { assetId: BTC, label: 'hot' });
  const vault2 = await client.vaults.create({
    externalId: `v-${Math.random().toString(36).slice(2)}`,
    name: 'Ops 2',
  });
  const target = await client.wallets.create(vault2.id, { assetId: BTC, label: 'cold' });
  const deposit = await client.sandbox.deposit({ walletId: source.walletId, amount });
  await until(
    () => client.transactions.get(deposit.transactionId),
    (t) => t.status === 'Completed',
  );
  return { source: source.walletId, target: target.walletId, vaultId: vault.id };
}

describe('custody client: signing', () => {
  it('signs every request with its own (timestamp, signature) tuple, so identical calls all pass', async () => {
    const { client } = clientThroughProxy();
    const from = proxy.requests.length;
    const assets = await Promise.all([client.assets.list(), client.assets.list(), client.assets.list()]);
    expect(assets[0].items.map((a) => a.symbol)).toEqual(expect.arrayContaining(['BTC', 'ETH']));
    const sent = newRequests(from);
    expect(sent.every((r) => r.answered === 200)).toBe(true);
    expect(sent.map((r) => r.headers['x-api-key'])).toEqual([key.apiKey, key.apiKey, key.apiKey]);
    expect(new Set(sent.map((r) => r.headers['x-timestamp'])).size).toBe(3);
    expect(new Set(sent.map((r) => r.headers['x-signature'])).size).toBe(3);
    for (const r of sent) expect(r.headers['x-timestamp']).toMatch(/^\d{13}$/);
  });

  it('re-signs once after a 401 (new timestamp and signature) and succeeds', async () => {
    const { client, retries, delays } = clientThroughProxy();
    const from = proxy.requests.length;
    proxy.inject({ status: 401, times: 1, match: (r) => r.url === '/assets' });
    await expect(client.assets.list()).resolves.toEqual({ items: expect.any(Array) });
    const [first, second] = newRequests(from);
    expect([first.answered, second.answered]).toEqual([401, 200]);
    expect(second.headers['x-timestamp']).not.toBe(first.headers['x-timestamp']);
    expect(second.headers['x-signature']).not.toBe(first.headers['x-signature']);
    expect(retries).toEqual([expect.objectContaining({ reason: 're-sign', status: 401, delayMs: 0 })]);
    expect(delays).toEqual([]);
  });

  it('gives a wrong secret one re-sign, then surfaces the 401 with the server message', async () => {
    const { client } = clientThroughProxy({ apiSecret: 'not-the-secret' });
    const from = proxy.requests.length;
    const err = (await client.assets.list().catch((e) => e)) as TesseraApiError;
    expect(err).toBeInstanceOf(TesseraApiError);
    expect(err.status).toBe(401);
    expect(typeof err.message).toBe('string');
    expect(err.attempts).toBe(2);
    expect(newRequests(from).map((r) => r.answered)).toEqual([401, 401]);
  });
});

describe('custody client: back-off', () => {
  it('sleeps Retry-After on a 429, logs every 429, then succeeds', async () => {
    const { client, delays, logger } = clientThroughProxy();
    proxy.inject({
      status: 429,
      headers: { 'retry-after': '2' },
      times: 2,
      match: (r) => r.url === '/assets',
    });
    await expect(client.assets.list()).resolves.toEqual({ items: expect.any(Array) });
    expect(delays).toEqual([2000, 2000]);
    expect(logger.lines.filter((l) => l.details.status === 429)).toHaveLength(2);
    expect(JSON.stringify(logger.lines)).not.toContain(key.apiSecret);
  });

  it("reads the real Retry-After of the app's own per-key limit (no proxy) and logs each 429", async () => {
    const limitedUrl = await startCustodyReplica(stack, { CUSTODY_RATE_LIMIT_PER_KEY: '3' });
    const tenant = await adminPost<{ id: string }>(stack.custodyUrl!, '/admin/tenants', { name: 'Limited' });
    const limitedKey = await adminPost<{ apiKey: string; apiSecret: string }>(
      stack.custodyUrl!,
      `/admin/tenants/${tenant.id}/keys`,
      { environment: 'test', scopes: ['assets:read'] },
    );
    const { delays, logger } = clientThroughProxy();
    const client = createCustodyClient({
      baseUrl: limitedUrl,
      ...limitedKey,
      sleep: async (ms) => void delays.push(ms),
      logger,
      retry: { maxAttempts: 2 },
    });
    for (let i = 0; i < 3; i++) await client.assets.list();
    const err = (await client.assets.list().catch((e) => e)) as TesseraApiError;
    expect(err).toBeInstanceOf(TesseraApiError);
    expect(err.status).toBe(429);
    expect(err.attempts).toBe(2);
    // The app's Retry-After (integer seconds until the sliding window frees a slot) was slept, not a guess.
    expect(delays).toHaveLength(1);
    expect(delays[0] % 1000).toBe(0);
    expect(delays[0]).toBeGreaterThanOrEqual(1000);
    expect(delays[0]).toBeLessThanOrEqual(60_000);
    expect(logger.lines.filter((l) => l.details.status === 429)).toHaveLength(2);
  }, 180_000);

  it('without Retry-After backs off exponentially from 1 s, and gives up after 6 tries', async () => {
    const { client, delays, logger } = clientThroughProxy();
    const from = proxy.requests.length;
    proxy.inject({ status: 429, times: 6, match: (r) => r.url === '/assets' });
    const err = (await client.assets.list().catch((e) => e)) as TesseraApiError;
    expect(err).toBeInstanceOf(TesseraApiError);
    expect(err.status).toBe(429);
    expect(err.attempts).toBe(6);
    expect(newRequests(from)).toHaveLength(6);
    expect(delays).toEqual([1000, 2000, 4000, 8000, 16000]);
    expect(logger.lines.filter((l) => l.details.status === 429)).toHaveLength(6);
  });

  it('backs off about 1, 2, 4 s on 503 for a GET and then succeeds', async () => {
    const { client, delays, retries } = clientThroughProxy();
    proxy.inject({ status: 503, times: 3, match: (r) => r.url === '/assets' });
    await expect(client.assets.list()).resolves.toEqual({ items: expect.any(Array) });
    expect(delays).toEqual([1000, 2000, 4000]);
    expect(retries.map((r) => [r.reason, r.status])).toEqual([
      ['unavailable', 503],
      ['unavailable', 503],
      ['unavailable', 503],
    ]);
  });

  it('does not retry a POST without an idempotency key on 503', async () => {
    const { client, delays } = clientThroughProxy();
    const from = proxy.requests.length;
    proxy.inject({ status: 503, times: 1, match: (r) => r.url === '/vaults' && r.method === 'POST' });
    const err = (await client.vaults
      .create({ externalId: 'never', name: 'x' })
      .catch((e) => e)) as TesseraApiError;
    expect(err.status).toBe(503);
    expect(newRequests(from)).toHaveLength(1);
    expect(delays).toEqual([]);
  });
});

describe('custody client: idempotency', () => {
  it('reuses one Idempotency-Key across a retry: the retried transfer creates exactly one transaction', async () => {
    const { client } = clientThroughProxy();
    const { source, target } = await fundedWallets(client, '1');
    const from = proxy.requests.length;
    // The app processes the first try, but the client sees a 503 and retries the same call.
    proxy.inject({
      status: 503,
      times: 1,
      afterForwarding: true,
      match: (r) => r.url === '/transactions/transfer',
    });
    const tx = await client.transactions.transfer({
      sourceWalletId: source,
      destinationWalletId: target,
      amount: '0.25',
    });
    const tries = newRequests(from).filter((r) => r.url === '/transactions/transfer');
    expect(tries.map((r) => r.answered)).toEqual([503, 201]);
    expect(tries[0].headers['idempotency-key']).toMatch(/^[A-Za-z0-9_-]{1,64}$/);
    expect(tries[1].headers['idempotency-key']).toBe(tries[0].headers['idempotency-key']);
    expect(tries[1].headers['x-signature']).not.toBe(tries[0].headers['x-signature']);

    const transfers = await client.transactions
      .list({ walletId: source, type: 'InternalTransfer' })
      .toArray();
    expect(transfers.map((t) => t.transactionId)).toEqual([tx.transactionId]);
    const balance = await client.wallets.balance(source);
    expect(balance.available).toBe('0.75');
  });

  it('uses the caller key when given; a second logical call with the same key returns the same transaction', async () => {
    const { client } = clientThroughProxy();
    const { source, target } = await fundedWallets(client, '1');
    const body = { sourceWalletId: source, destinationWalletId: target, amount: '0.1' };
    const a = await client.transactions.transfer(body, { idempotencyKey: 'order-42_retry-safe' });
    const b = await client.transactions.transfer(body, { idempotencyKey: 'order-42_retry-safe' });
    expect(b.transactionId).toBe(a.transactionId);
    const c = await client.transactions.transfer(body);
    expect(c.transactionId).not.toBe(a.transactionId);
    expect(() => client.transactions.transfer(body, { idempotencyKey: 'has spaces' })).toThrow(TypeError);
  });
});

describe('custody client: pagination', () => {
  it('walks every page of /transactions and /vaults with async iterators', async () => {
    const { client } = clientThroughProxy();
    const { source, target } = await fundedWallets(client, '2');
    for (let i = 0; i < 4; i++)
      await client.transactions.transfer({
        sourceWalletId: source,
        destinationWalletId: target,
        amount: '0.01',
      });
    const from = proxy.requests.length;
    const seen: string[] = [];
    for await (const tx of client.transactions.list({ walletId: source, take: 2 }))
      seen.push(tx.transactionId);
    expect(seen).toHaveLength(5); // the deposit and four transfers
    expect(new Set(seen).size).toBe(5);
    const pages = newRequests(from).filter((r) => r.url.startsWith('/transactions?'));
    expect(pages.length).toBeGreaterThanOrEqual(3);
    expect(pages[0].url).not.toContain('cursor=');
    expect(pages[1].url).toContain('cursor=');

    const firstTwo = await client.vaults.list({ take: 1 }).toArray(2);
    expect(firstTwo).toHaveLength(2);
    const all = await client.vaults.list({ take: 3 }).toArray();
    expect(all.length).toBeGreaterThan(3);
    expect(new Set(all.map((v) => v.id)).size).toBe(all.length);
  });
});

describe('custody client: webhooks', () => {
  it('verifies real deliveries from the dispatcher and refuses tampered ones', async () => {
    const { client } = clientThroughProxy();
    const config = await client.webhooks.configure({ url: stack.receiver.url });
    const secret = config.signingSecret!;
    expect(secret).toMatch(/^whsec_/);
    await client.webhooks.sendTest();
    const { vaultId } = await fundedWallets(client, '0.5');

    const deliveries = await until(
      () => stack.receiver.deliveries,
      (list) =>
        list.some((d) => d.body.includes('webhook.test')) &&
        list.some((d) => d.body.includes('"transaction.created"') && d.body.includes(vaultId)),
    );
    for (const d of deliveries) {
      expect(verifyWebhook({ secret, rawBody: d.body, headers: d.headers })).toEqual({
        ok: true,
        schemes: ['x-webhook-signature', 'standard-webhooks'],
      });
    }
    const created = deliveries.find(
      (d) => d.body.includes('"transaction.created"') && d.body.includes(vaultId),
    )!;
    const envelope = constructWebhookEvent<{ sourceWalletId: string | null; amount: string }>({
      secret,
      rawBody: Buffer.from(created.body),
      headers: created.headers,
    });
    expect(envelope).toMatchObject({
      eventType: 'transaction.created',
      entityType: 'transaction',
      data: { amount: '0.5' },
    });

    const tampered = created.body.replace('"0.5"', '"500"');
    expect(tampered).not.toBe(created.body);
    expect(verifyWebhook({ secret, rawBody: tampered, headers: created.headers })).toEqual({
      ok: false,
      reason: 'X-Webhook-Signature does not match',
    });
    const onlyStandard = { ...created.headers, 'x-webhook-signature': undefined };
    expect(verifyWebhook({ secret, rawBody: tampered, headers: onlyStandard })).toEqual({
      ok: false,
      reason: 'webhook-signature does not match',
    });
    expect(verifyWebhook({ secret: `${secret}x`, rawBody: created.body, headers: created.headers }).ok).toBe(
      false,
    );
    expect(
      verifyWebhook({
        secret,
        rawBody: created.body,
        headers: onlyStandard,
        now: () => Date.now() + 10 * 60_000,
      }),
    ).toEqual({ ok: false, reason: 'webhook-timestamp is more than 300 s from now' });
    expect(() => constructWebhookEvent({ secret, rawBody: tampered, headers: created.headers })).toThrow(
      'X-Webhook-Signature does not match',
    );
    // A delivery stripped of its timestamped headers is a replay waiting to happen: refused unless asked.
    const onlyContract = {
      ...created.headers,
      'webhook-id': undefined,
      'webhook-timestamp': undefined,
      'webhook-signature': undefined,
    };
    expect(verifyWebhook({ secret, rawBody: created.body, headers: onlyContract })).toEqual({
      ok: false,
      reason: 'webhook-signature missing: the timestamped signature is required',
    });
    expect(
      verifyWebhook({ secret, rawBody: created.body, headers: onlyContract, requireTimestamp: false }),
    ).toEqual({ ok: true, schemes: ['x-webhook-signature'] });

    const listed = await client.webhooks.deliveries.list({ pageSize: 1 }).toArray(3);
    expect(listed.length).toBeGreaterThanOrEqual(2);
  });

  it('puts the real deliveries of one transaction back in sequence order, whatever order they arrive in', async () => {
    const { client } = clientThroughProxy();
    await client.webhooks.configure({ url: stack.receiver.url });
    const { vaultId } = await fundedWallets(client, '0.25');
    const parsed = () =>
      stack.receiver.deliveries
        .map((d) => JSON.parse(d.body) as WebhookEnvelope)
        .filter((e) => e.entityType === 'transaction' && JSON.stringify(e.data).includes(vaultId));
    // The deposit moves Submitted → … → Completed: created plus one status.updated per step.
    const events = await until(parsed, (list) => list.some((e) => e.data.status === 'Completed'));
    const ids = new Set(events.map((e) => e.entityId));
    expect(ids.size).toBe(1);
    expect(events.every((e) => Number.isInteger(e.sequence))).toBe(true);

    const released: WebhookEnvelope[] = [];
    const reorderer = new SequenceReorderer<WebhookEnvelope>({ onRelease: (e) => released.push(e) });
    for (const e of [...events].reverse()) reorderer.push(e);
    reorderer.push(events[0]);
    expect(released.map((e) => e.sequence)).toEqual(events.map((_, i) => i + 1));
    expect(released[0].eventType).toBe('transaction.created');
    expect(released.at(-1)?.data.status).toBe('Completed');
  });
});
