import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { signRequest } from '@tessera/auth';
import {
  freePort,
  type ServiceProcess,
  startServiceProcess,
  TEST_ADMIN_TOKEN,
  type TestEnvironment,
} from '@tessera/testing';

/** The built entry points (`pnpm build` first): the API role and the worker role, as in production. */
export const API_MAIN = join(__dirname, '../dist/main.js');
export const WORKER_MAIN = join(__dirname, '../dist/worker.js');

export function assertBuilt(): void {
  for (const main of [API_MAIN, WORKER_MAIN]) {
    if (!existsSync(main)) throw new Error(`${main} is missing: run pnpm build first`);
  }
}

/** Env shared by both roles in a chaos run: fast simulator, limits out of the way of the load. */
export function chaosEnv(env: TestEnvironment, extra: Record<string, string> = {}): Record<string, string> {
  return {
    ...env.env,
    CHAIN_SIM_STEP_DELAY_MS: '5',
    CHAIN_SIM_BLOCK_MS: '1',
    CUSTODY_RATE_LIMIT_PER_KEY: '1000000',
    CUSTODY_RATE_LIMIT_PER_IP: '1000000',
    DB_POOL_SIZE: '10',
    ...extra,
  };
}

/** How long a role may take to boot: a restart competes with the load for the CPU. */
const BOOT_TIMEOUT_MS = 90_000;

/** `node dist/main.js` (the API role) as a child process, healthy on a free loopback port. */
export function startApiProcess(vars: Record<string, string>): Promise<ServiceProcess> {
  return startServiceProcess('custody-api', API_MAIN, vars, undefined, BOOT_TIMEOUT_MS);
}

/** `node dist/worker.js` (consumers, outbox relay, sweeper) as a child process, healthy on WORKER_PORT. */
export async function startWorkerProcess(vars: Record<string, string>): Promise<ServiceProcess> {
  const port = await freePort();
  return startServiceProcess(
    'custody-worker',
    WORKER_MAIN,
    { ...vars, WORKER_PORT: String(port) },
    port,
    BOOT_TIMEOUT_MS,
  );
}

export interface HttpAnswer {
  status: number;
  text: string;
  body: any;
}

async function answer(res: Response): Promise<HttpAnswer> {
  const text = await res.text();
  let body: unknown = undefined;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    body = undefined;
  }
  return { status: res.status, text, body };
}

/** The operator API over HTTP (Bearer ADMIN_TOKEN). */
export async function adminPost(port: number, path: string, body: unknown): Promise<HttpAnswer> {
  const res = await fetch(`http://127.0.0.1:${port}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return answer(res);
}

export interface SignedHttpClient {
  get: (path: string) => Promise<HttpAnswer>;
  post: (path: string, body: unknown, headers?: Record<string, string>) => Promise<HttpAnswer>;
}

/** A client signing every request as the SDK does (libs/auth signRequest), over real HTTP to `port`. */
export function signedClient(port: number, key: { apiKey: string; apiSecret: string }): SignedHttpClient {
  const send = async (method: 'GET' | 'POST', path: string, body?: unknown, extra = {}) => {
    const raw = body === undefined ? '' : JSON.stringify(body);
    const signed = signRequest(key.apiKey, key.apiSecret, { method, pathWithQuery: path, body: raw });
    const res = await fetch(`http://127.0.0.1:${port}${path}`, {
      method,
      headers: { ...signed, ...extra, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : raw,
    });
    return answer(res);
  };
  return {
    get: (path) => send('GET', path),
    post: (path, body, headers = {}) => send('POST', path, body, headers),
  };
}

/** A tenant with a full-scope sandbox key, created through the operator API. */
export async function createTenantKey(port: number): Promise<{ apiKey: string; apiSecret: string }> {
  const tenant = await adminPost(port, '/admin/tenants', { name: 'Chaos' });
  if (tenant.status !== 201) throw new Error(`tenant: ${tenant.status} ${tenant.text}`);
  const key = await adminPost(port, `/admin/tenants/${tenant.body.id}/keys`, {
    environment: 'test',
    scopes: 'all',
  });
  if (key.status !== 201) throw new Error(`key: ${key.status} ${key.text}`);
  return { apiKey: key.body.apiKey, apiSecret: key.body.apiSecret };
}

/** Base units of BTC (8 decimals) as the contract's decimal string. */
export const sats = (n: number) => {
  const s = String(n).padStart(9, '0');
  return `${s.slice(0, -8)}.${s.slice(-8)}`.replace(/\.?0+$/, '') || '0';
};

export const BTC = 'a0000000-0000-4000-8000-000000000001';
/** Simulator withdrawals to BOOK_OK complete; to BOOK_FAILS they fail at broadcast (CHAIN_SIM_FAIL_DESTINATIONS). */
export const BOOK_OK = 'tb1qw508d6qejxtdg4y5r3zarvary0c5xw7kxpjzsx';
export const BOOK_FAILS = 'tb1qrp33g0q5c5txsp9arysrx4k6zdkfs4nce4xj0gdcccefvpysxf3q0sl5k7';
