#!/usr/bin/env node
// `pnpm seed`: demo data on a running stack (`pnpm start`, or docker compose with SEED_* URLs), printed as JSON and as
// `export` lines. It creates, through the operator and partner APIs only (so it works against any deployment):
//   - a verification product with a production and a sandbox key, an individual level BASIC_KYC (default) and a
//     company level BASIC_KYB;
//   - a custody tenant with a test and a live key holding every scope (preset "all");
//   - a sandbox vault with an ETH wallet funded by a sandbox deposit of 10 ETH (waits until it is credited).
// Settings: the operator token and ports of this checkout (scripts/lib/host-env.mjs), or
//   SEED_VERIFICATION_URL, SEED_CUSTODY_URL and ADMIN_TOKEN for another deployment.
// `--json` prints only the JSON document (for scripts).
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { hostEnv, hostPorts } from './lib/host-env.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const jsonOnly = process.argv.includes('--json');
const progress = (line) => process.stderr.write(`[seed] ${line}\n`);

const host = hostEnv(root, { write: false });
const ports = hostPorts(host.base);
const verificationUrl = process.env.SEED_VERIFICATION_URL ?? `http://127.0.0.1:${ports['verification-api']}`;
const custodyUrl = process.env.SEED_CUSTODY_URL ?? `http://127.0.0.1:${ports['custody-api']}`;
// The URLs the printed export lines give: where the APIs answer from the reader's shell. Under docker compose the
// seed calls the APIs by their service names, which only resolve inside compose's network.
const publicVerificationUrl = process.env.SEED_PUBLIC_VERIFICATION_URL ?? verificationUrl;
const publicCustodyUrl = process.env.SEED_PUBLIC_CUSTODY_URL ?? custodyUrl;
const adminToken = host.env.ADMIN_TOKEN;
if (!adminToken) {
  process.stderr.write(
    '[seed] ADMIN_TOKEN is not set and there is no .env: run `pnpm start` first, or set ADMIN_TOKEN\n',
  );
  process.exit(2);
}

const { signRequest } = await import(join(root, 'libs/auth/dist/index.js'));

async function call(base, method, path, { body, headers = {} } = {}) {
  const raw = body === undefined ? undefined : JSON.stringify(body);
  let res;
  try {
    res = await fetch(`${base}${path}`, {
      method,
      headers: { ...(raw ? { 'content-type': 'application/json' } : {}), ...headers },
      body: raw,
    });
  } catch (err) {
    throw new Error(
      `${method} ${base}${path}: ${err.cause?.code ?? err.message} (is the stack running? pnpm start)`,
    );
  }
  const text = await res.text();
  const parsed = text ? JSON.parse(text) : undefined;
  if (!res.ok) throw new Error(`${method} ${path} answered ${res.status}: ${text}`);
  return parsed;
}

const operator = (base) => (method, path, body) =>
  call(base, method, path, { body, headers: { authorization: `Bearer ${adminToken}` } });

function custodyClient(key) {
  return (method, path, body) => {
    const raw = body === undefined ? '' : JSON.stringify(body);
    const headers = signRequest(key.apiKey, key.apiSecret, { method, pathWithQuery: path, body: raw });
    return call(custodyUrl, method, path, { body, headers });
  };
}

const stamp = new Date().toISOString().slice(0, 19).replace(/[-:T]/g, '');

progress(`verification-api ${verificationUrl}: product, keys, levels`);
const vAdmin = operator(verificationUrl);
const product = await vAdmin('POST', '/admin/v1/products', { name: `Demo ${stamp}` });
const production = await vAdmin('POST', `/admin/v1/products/${product.id}/keys`, {
  environment: 'production',
});
const sandbox = await vAdmin('POST', `/admin/v1/products/${product.id}/keys`, { environment: 'sandbox' });
await vAdmin('POST', `/admin/v1/products/${product.id}/levels`, {
  name: 'BASIC_KYC',
  applicantType: 'individual',
  isDefault: true,
  steps: [{ kind: 'personal_information' }, { kind: 'identity_doc' }, { kind: 'selfie' }, { kind: 'aml' }],
  personalInfoRequiredFields: ['firstName', 'lastName', 'dateOfBirth'],
});
await vAdmin('POST', `/admin/v1/products/${product.id}/levels`, {
  name: 'BASIC_KYB',
  applicantType: 'company',
  isDefault: true,
  steps: [{ kind: 'company_data' }, { kind: 'company_documents' }, { kind: 'aml' }],
});

progress(`custody-api ${custodyUrl}: tenant, keys, vault, funded ETH wallet`);
const cAdmin = operator(custodyUrl);
const tenant = await cAdmin('POST', '/admin/tenants', { name: `Demo ${stamp}` });
const testKey = await cAdmin('POST', `/admin/tenants/${tenant.id}/keys`, {
  environment: 'test',
  scopes: 'all',
});
const liveKey = await cAdmin('POST', `/admin/tenants/${tenant.id}/keys`, {
  environment: 'live',
  scopes: 'all',
});
const custody = custodyClient(testKey);
const vault = await custody('POST', '/vaults', { externalId: `demo-${stamp}`, name: 'Demo treasury' });
const { walletId } = await custody('POST', `/vaults/${vault.id}/wallets`, {
  assetId: 'ETH',
  label: 'Demo ETH',
});
await custody('POST', '/sandbox/deposits', { walletId, amount: '10' });
let balance;
const deadline = Date.now() + 60_000;
do {
  await new Promise((r) => setTimeout(r, 500));
  balance = await custody('GET', `/wallets/${walletId}/balance`);
  progress(`waiting for the sandbox deposit to be credited (available ${balance.available} ETH)`);
} while (balance.available === '0' && Date.now() < deadline);
if (balance.available === '0')
  throw new Error('the sandbox deposit was not credited within 60 s (is the custody worker running?)');

const seed = {
  verification: {
    baseUrl: publicVerificationUrl,
    productId: product.id,
    production: { apiKey: production.apiKey, apiSecret: production.apiSecret },
    sandbox: { apiKey: sandbox.apiKey, apiSecret: sandbox.apiSecret },
    levels: ['BASIC_KYC', 'BASIC_KYB'],
  },
  custody: {
    baseUrl: publicCustodyUrl,
    tenantId: tenant.id,
    test: { apiKey: testKey.apiKey, apiSecret: testKey.apiSecret, scopes: testKey.scopes },
    live: { apiKey: liveKey.apiKey, apiSecret: liveKey.apiSecret, scopes: liveKey.scopes },
    sandboxVaultId: vault.id,
    sandboxWalletId: walletId,
    sandboxWalletBalance: balance.available,
  },
};

process.stdout.write(`${JSON.stringify(seed, null, 2)}\n`);
if (!jsonOnly) {
  const exports = {
    TESSERA_VERIFICATION_URL: publicVerificationUrl,
    TESSERA_VERIFICATION_KEY: sandbox.apiKey,
    TESSERA_VERIFICATION_SECRET: sandbox.apiSecret,
    TESSERA_VERIFICATION_PRODUCTION_KEY: production.apiKey,
    TESSERA_VERIFICATION_PRODUCTION_SECRET: production.apiSecret,
    TESSERA_CUSTODY_URL: publicCustodyUrl,
    TESSERA_CUSTODY_KEY: testKey.apiKey,
    TESSERA_CUSTODY_SECRET: testKey.apiSecret,
    TESSERA_CUSTODY_LIVE_KEY: liveKey.apiKey,
    TESSERA_CUSTODY_LIVE_SECRET: liveKey.apiSecret,
    TESSERA_CUSTODY_WALLET_ID: walletId,
  };
  process.stdout.write('\n# paste into your shell:\n');
  for (const [k, v] of Object.entries(exports)) process.stdout.write(`export ${k}=${v}\n`);
}
