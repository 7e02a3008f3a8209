import { join } from 'node:path';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { signRequest } from '@tessera/auth';
import {
  bootApp,
  createTestEnvironment,
  migratorFor,
  TEST_ADMIN_TOKEN,
  type TestEnvironment,
  until,
} from '@tessera/testing';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { AppModule } from '../src/app.module';
import { loadEnv } from '../src/config/env';
import { databaseOptions } from '../src/database/database';
import { WorkerModule } from '../src/worker.module';

export const migrator = migratorFor(databaseOptions, join(__dirname, '../src/database/migrations'));

export const ASSETS = {
  BTC: 'a0000000-0000-4000-8000-000000000001',
  ETH: 'a0000000-0000-4000-8000-000000000002',
  USDT: 'a0000000-0000-4000-8000-000000000003',
  XRP: 'a0000000-0000-4000-8000-000000000004',
};

/** The scopes of a plain partner key (no approvals, policies or webhooks); createKey adds sandbox:write to test keys. */
export const BASIC_SCOPES = [
  'vaults:read',
  'vaults:write',
  'wallets:read',
  'wallets:create',
  'assets:read',
  'transactions:read',
  'transfers:write',
  'withdrawals:write',
  'address-book:read',
  'address-book:write',
];

export interface Harness {
  env: TestEnvironment;
  api: NestFastifyApplication;
  worker?: NestFastifyApplication;
  close: () => Promise<void>;
}

/**
 * The simulator's pacing in the suites: 5 ms a step and 1 ms a block, so each step is a queue job of its own.
 * `pnpm --filter @tessera/custody-api test:run-on` runs the state-machine suites again at 0, where the steps
 * due at once run on in one job (decision 0424).
 */
const PACING = {
  CHAIN_SIM_STEP_DELAY_MS: process.env.TEST_CHAIN_SIM_STEP_DELAY_MS ?? '5',
  CHAIN_SIM_BLOCK_MS: process.env.TEST_CHAIN_SIM_BLOCK_MS ?? '1',
};

/** Boots the API role (and, unless told otherwise, the worker role) on a database of its own. */
export async function startHarness(
  extraEnv: Record<string, string> = {},
  opts: { worker?: boolean; listen?: boolean } = {},
): Promise<Harness> {
  const env = await createTestEnvironment([migrator]);
  const vars = {
    ...env.env,
    ...PACING,
    // The per-key limit has its own test (rate-limit.e2e-spec.ts); the other suites poll freely.
    CUSTODY_RATE_LIMIT_PER_KEY: '100000',
    ...extraEnv,
  };
  const api = await bootApp(AppModule.forRoot(loadEnv(vars)), { rpc: false, listen: opts.listen });
  const worker =
    opts.worker === false ? undefined : await bootApp(WorkerModule.forRoot(loadEnv(vars)), { rpc: false });
  return {
    env,
    api,
    worker,
    close: async () => {
      await worker?.close();
      await api.close();
      await env.teardown();
    },
  };
}

/** The operator API, with the test ADMIN_TOKEN. */
export const admin = (app: NestFastifyApplication) => {
  const as = (test: request.Test) => test.set('authorization', `Bearer ${TEST_ADMIN_TOKEN}`);
  return {
    get: (path: string) => as(request(app.getHttpServer()).get(path)),
    post: (path: string, body?: unknown) => as(request(app.getHttpServer()).post(path)).send(body as object),
    put: (path: string, body: unknown) => as(request(app.getHttpServer()).put(path)).send(body as object),
  };
};

export interface KeyPair {
  apiKey: string;
  apiSecret: string;
}

export async function createTenant(app: NestFastifyApplication, name = 'Acme'): Promise<string> {
  const res = await admin(app).post('/admin/tenants', { name }).expect(201);
  return res.body.id;
}

export async function createKey(
  app: NestFastifyApplication,
  tenantId: string,
  opts: { environment?: 'test' | 'live'; scopes?: string[]; ipAllowList?: string[] } = {},
): Promise<KeyPair> {
  const res = await admin(app)
    .post(`/admin/tenants/${tenantId}/keys`, {
      environment: opts.environment ?? 'test',
      scopes: opts.scopes ?? [...BASIC_SCOPES, ...(opts.environment === 'live' ? [] : ['sandbox:write'])],
      ...(opts.ipAllowList ? { ipAllowList: opts.ipAllowList } : {}),
    })
    .expect(201);
  return { apiKey: res.body.apiKey, apiSecret: res.body.apiSecret };
}

/** A client that signs every request exactly like the SDK will (libs/auth signRequest). */
export function client(app: NestFastifyApplication, key: KeyPair) {
  const send = (
    method: 'GET' | 'POST' | 'PUT' | 'DELETE',
    path: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ) => {
    const raw = body === undefined ? '' : JSON.stringify(body);
    const signed = signRequest(key.apiKey, key.apiSecret, { method, pathWithQuery: path, body: raw });
    let req = request(app.getHttpServer())[method.toLowerCase() as 'get' | 'post' | 'put' | 'delete'](path);
    for (const [k, v] of Object.entries({ ...signed, ...headers })) req = req.set(k, v);
    if (body !== undefined) req = req.set('content-type', 'application/json').send(raw);
    return req;
  };
  return {
    get: (path: string, headers?: Record<string, string>) => send('GET', path, undefined, headers),
    post: (path: string, body?: unknown, headers?: Record<string, string>) =>
      send('POST', path, body, headers),
    put: (path: string, body?: unknown, headers?: Record<string, string>) => send('PUT', path, body, headers),
    delete: (path: string, headers?: Record<string, string>) => send('DELETE', path, undefined, headers),
  };
}

export type Client = ReturnType<typeof client>;

let idem = 0;
export const newIdempotencyKey = () => `k-${process.pid}-${Date.now()}-${++idem}`;

/** `until` (libs/testing) with the custody suites' cadence: a read every 25 ms, 10 s by default. */
export const waitFor = <T>(probe: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 10_000) =>
  until(probe, done, { ms: timeoutMs, everyMs: 25 });

/** A tenant with a vault and one wallet per given asset, funded through sandbox deposits. */
export async function fundedWallet(
  api: Client,
  assetId: string,
  amount: string | undefined,
  vaultExternalId = `v-${Math.random().toString(36).slice(2)}`,
): Promise<{ vaultId: string; walletId: string; depositAddress: string }> {
  const vault = await api.post('/vaults', { externalId: vaultExternalId, name: 'Vault' }).expect(201);
  const wallet = await api.post(`/vaults/${vault.body.id}/wallets`, { assetId, label: 'main' }).expect(201);
  if (amount) {
    const dep = await api.post('/sandbox/deposits', { walletId: wallet.body.walletId, amount }).expect(201);
    await waitFor(
      () => api.get(`/transactions/${dep.body.transactionId}`).then((r) => r.body.status),
      (s) => s === 'Completed',
    );
  }
  return {
    vaultId: vault.body.id,
    walletId: wallet.body.walletId,
    depositAddress: wallet.body.depositAddress,
  };
}

/** Raw SQL against the app's own database (assertions on stored rows and the outbox). */
export function sql<T = Record<string, unknown>>(
  h: Harness,
  text: string,
  params: unknown[] = [],
): Promise<T[]> {
  return h.api.get(DataSource).query(text, params);
}

/**
 * A connection of its own holding a transaction open after `statement` (the row or advisory lock the requests
 * under test wait for, which orders them); `release` commits it and gives the connection back.
 */
export async function holding(
  h: Harness,
  statement: string,
  params: unknown[] = [],
): Promise<{ release: () => Promise<void> }> {
  const runner = h.api.get(DataSource).createQueryRunner();
  await runner.connect();
  await runner.startTransaction();
  await runner.query(statement, params);
  return {
    release: async () => {
      await runner.commitTransaction();
      await runner.release();
    },
  };
}

/**
 * Backends of the harness's database waiting for a lock (of the kind `event`, e.g. 'advisory', when given)
 * while running a statement that matches `pattern` (ILIKE; any by default).
 */
export const lockWaiters = (h: Harness, pattern = '%', event?: string) =>
  sql<{ n: number }>(
    h,
    `SELECT count(*)::int AS n FROM pg_stat_activity
      WHERE datname = current_database() AND wait_event_type = 'Lock' AND query ILIKE $1
        AND ($2::text IS NULL OR wait_event = $2)`,
    [pattern, event ?? null],
  ).then((r) => r[0]!.n);

/**
 * A BTC wallet credited without a worker: the sandbox deposit completed by hand, with its ledger entry (for
 * suites that keep transactions where the test puts them).
 */
export async function creditedWallet(h: Harness, api: Client, amount: string) {
  const w = await fundedWallet(api, ASSETS.BTC, undefined);
  const dep = await api.post('/sandbox/deposits', { walletId: w.walletId, amount }).expect(201);
  await sql(
    h,
    `WITH t AS (UPDATE transactions SET status = 'Completed', completed_at = now() WHERE id = $1 RETURNING amount)
     , e AS (INSERT INTO ledger_entries (wallet_id, transaction_id, kind, total_delta, available_delta, pending_delta, locked_delta)
             SELECT $2, $1, 'deposit-credit', amount, amount, -amount, 0 FROM t)
     UPDATE balances SET total = total + (SELECT amount FROM t), available = available + (SELECT amount FROM t),
       pending = pending - (SELECT amount FROM t) WHERE wallet_id = $2`,
    [dep.body.transactionId, w.walletId],
  );
  return w;
}

/** A second API role on the harness's database and Redis, with its own settings (fast simulator steps unless overridden). */
export function bootApi(h: Harness, vars: Record<string, string> = {}) {
  return bootApp(AppModule.forRoot(loadEnv({ ...h.env.env, ...PACING, ...vars })), { rpc: false });
}

/** A worker role booted later on the harness's database and Redis (fast simulator steps unless overridden). */
export function bootWorker(h: Harness, vars: Record<string, string> = {}) {
  return bootApp(WorkerModule.forRoot(loadEnv({ ...h.env.env, ...PACING, ...vars })), { rpc: false });
}

/**
 * The transaction.status.updated rows of the given transactions, per transaction in sequence order, with the
 * start of the database transaction that committed each (created_at).
 */
export function statusEvents(h: Harness, transactionIds: string[]) {
  return sql<{
    entityId: string;
    previousStatus: string;
    status: string;
    sequence: number;
    createdAt: string;
  }>(
    h,
    `SELECT entity_id AS "entityId", data->>'previousStatus' AS "previousStatus", data->>'status' AS status,
            sequence::int AS sequence, created_at::text AS "createdAt"
     FROM outbox WHERE event_type = 'transaction.status.updated' AND entity_id = ANY($1::text[])
     ORDER BY entity_id, sequence`,
    [transactionIds],
  );
}
