import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { createRedis, REDIS } from '@tessera/platform';
import { bootApp, type TcpProxy, testRedisProxy } from '@tessera/testing';
import type Redis from 'ioredis';
import { AppModule } from '../src/app.module';
import { loadEnv } from '../src/config/env';
import {
  admin,
  ASSETS,
  BASIC_SCOPES,
  bootWorker,
  client,
  type Client,
  createKey,
  createTenant,
  fundedWallet,
  type Harness,
  newIdempotencyKey,
  startHarness,
  waitFor,
} from './support';

// An approved withdrawal's start while Redis hangs (decision 0491): the vote that reaches the quorum commits,
// answers, and the worker starts the withdrawal from Postgres. Real API, worker, Postgres and Redis; the hang is
// a held TCP proxy in front of one connection only.

const BOOK = 'tb1qw508d6qejxtdg4y5r3zarvary0c5xw7kxpjzsx';
/** What an approval may take: the vote's transaction and the answer's reads, on a loaded 2-core machine. */
const PROMPT_MS = 2000;

let h: Harness;
let requester: Client;
let approverKey: Awaited<ReturnType<typeof createKey>>;
let walletId: string;
/** The worker on a direct connection to Redis (the second part replaces it with one behind a proxy). */
let directWorker: NestFastifyApplication | undefined;

const status = (id: string) => requester.get(`/transactions/${id}`).then((r) => r.body.status as string);

/** A withdrawal above the policy's threshold: it waits Submitted for its one approval. */
async function pendingWithdrawal(): Promise<string> {
  const res = await requester
    .post(
      '/transactions/withdraw',
      { sourceWalletId: walletId, destinationAddress: BOOK, amount: '0.1' },
      { 'idempotency-key': newIdempotencyKey() },
    )
    .expect(201);
  expect(res.body.pendingApprovals).toMatchObject({ status: 'pending', required: 1 });
  return res.body.transactionId as string;
}

/** Approves `id` through `app` and expects the quorum's answer within PROMPT_MS (a hang fails at 8 s). */
async function approvePromptly(app: NestFastifyApplication, id: string): Promise<void> {
  const started = Date.now();
  const res = await client(app, approverKey).post(`/transactions/${id}/approve`, {}).timeout(8000);
  const tookMs = Date.now() - started;
  expect({ status: res.status, approval: res.body.pendingApprovals?.status }).toEqual({
    status: 200,
    approval: 'approved',
  });
  expect(tookMs).toBeLessThan(PROMPT_MS);
}

beforeAll(async () => {
  h = await startHarness({}, { worker: false });
  directWorker = await bootWorker(h);
  const tenantId = await createTenant(h.api);
  requester = client(
    h.api,
    await createKey(h.api, tenantId, { scopes: [...BASIC_SCOPES, 'sandbox:write', 'withdrawals:approve'] }),
  );
  approverKey = await createKey(h.api, tenantId, { scopes: ['transactions:read', 'withdrawals:approve'] });
  await requester.post('/address-book', { assetId: ASSETS.BTC, address: BOOK, label: 'Cold' }).expect(201);
  await admin(h.api)
    .put(`/admin/tenants/${tenantId}/policies/test`, {
      approvals: [{ asset: 'BTC', above: '0.05', required: 1, approvers: [approverKey.apiKey] }],
    })
    .expect(200);
  walletId = (await fundedWallet(requester, ASSETS.BTC, '1')).walletId;
}, 60_000);
afterAll(async () => {
  await directWorker?.close();
  await h?.close();
});

describe("the API's queue connection hangs", () => {
  let proxy: TcpProxy;
  let api: NestFastifyApplication;

  beforeAll(async () => {
    proxy = await testRedisProxy();
    // A second API role whose BullMQ connection (REDIS) goes through the proxy; its request-path connection
    // (REQUEST_REDIS: replay claims, rate limits) does not, so only the queue connection hangs.
    const env = loadEnv({ ...h.env.env, CUSTODY_RATE_LIMIT_PER_KEY: '100000' });
    api = await bootApp(AppModule.forRoot(env), {
      rpc: false,
      overrides: [
        {
          provide: REDIS,
          useFactory: (): Redis => createRedis(proxy.url('redis'), { connectionName: 'custody-api' }),
        },
      ],
    });
  });
  afterAll(async () => {
    proxy.release();
    await api?.close();
    await proxy.close();
  });

  it('the quorum approval answers at once, and the worker starts the withdrawal while the hang lasts', async () => {
    const id = await pendingWithdrawal();
    proxy.hold();
    try {
      await approvePromptly(api, id);
      // The worker's own connection answers: the start went out from Postgres, not from the request.
      await waitFor(
        () => status(id),
        (s) => s === 'Completed',
      );
    } finally {
      proxy.release();
    }
  }, 30_000);
});

describe("the worker's Redis hangs", () => {
  let proxy: TcpProxy;
  let worker: NestFastifyApplication | undefined;

  beforeAll(async () => {
    proxy = await testRedisProxy();
    // The harness's worker leaves: the one left reaches Redis only through the proxy.
    await directWorker!.close();
    directWorker = undefined;
    worker = await bootWorker(h, { REDIS_URL: proxy.url('redis') });
  });
  afterAll(async () => {
    proxy.release();
    await worker?.close();
    await proxy.close();
  });

  it('the approval answers; the withdrawal waits Submitted, then starts once Redis answers again', async () => {
    const id = await pendingWithdrawal();
    proxy.hold();
    try {
      await approvePromptly(h.api, id);
      await new Promise((r) => setTimeout(r, 1500));
      expect(await status(id)).toBe('Submitted');
    } finally {
      proxy.release();
    }
    await waitFor(
      () => status(id),
      (s) => s === 'Completed',
    );
  }, 30_000);

  it('a quorum committed while no worker runs is started by the next worker (nothing lives in memory)', async () => {
    await worker!.close();
    worker = undefined;
    const id = await pendingWithdrawal();
    await approvePromptly(h.api, id);
    await new Promise((r) => setTimeout(r, 300));
    expect(await status(id)).toBe('Submitted');
    worker = await bootWorker(h, { REDIS_URL: proxy.url('redis') });
    await waitFor(
      () => status(id),
      (s) => s === 'Completed',
    );
  }, 30_000);
});
