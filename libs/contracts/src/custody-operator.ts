import { z } from 'zod';

/**
 * The custody operator API (`/admin`, `Authorization: Bearer $ADMIN_TOKEN`; DECISIONS.md, "Operating
 * interface"): tenants, their keys, gas stations and assets. Its policies and reconciliations use the schemas
 * of custody-policies.ts and custody.ts.
 */

/** Every scope a custody key can carry (DECISIONS.md, "Custody API"). */
export const CUSTODY_SCOPES = [
  'vaults:read',
  'vaults:write',
  'wallets:read',
  'wallets:create',
  'assets:read',
  'transactions:read',
  'transfers:write',
  'withdrawals:write',
  'withdrawals:approve',
  'policies:read',
  'address-book:read',
  'address-book:write',
  'webhooks:read',
  'webhooks:write',
  'sandbox:write',
] as const;

/** Scopes a live key never carries. */
export const CUSTODY_SANDBOX_ONLY_SCOPES: readonly string[] = ['sandbox:write'];

/** The preset for every scope the key's environment may carry. */
export const CUSTODY_ALL_SCOPES = 'all';

const environment = z.enum(['test', 'live']);
const scopeList = z.array(z.enum([...CUSTODY_SCOPES, CUSTODY_ALL_SCOPES]));

/** Body of `POST /admin/tenants`. */
export const createTenantInput = z.object({ name: z.string().trim().min(1).max(200) });

/** `POST /admin/tenants`: the new tenant. */
export const tenantResponse = z.object({ id: z.string().uuid(), name: z.string() });

/**
 * Body of `POST /admin/tenants/{tenantId}/keys`. `scopes` is a list, or the preset `"all"` alone (as a string
 * or a one-element list): the preset becomes every scope of the environment, and `sandbox:write` is for test
 * keys only. A bad scope is reported at its index (`scopes.0`). The service checks each `ipAllowList` entry
 * as an IP address or CIDR.
 */
export const createKeyInput = z.object({
  environment,
  scopes: z
    .preprocess((v) => (v === CUSTODY_ALL_SCOPES ? [CUSTODY_ALL_SCOPES] : v), scopeList.min(1))
    .describe(
      'The scopes; the preset "all" (also accepted as a bare string) is every scope of the environment',
    ),
  ipAllowList: z
    .array(z.string().describe('An IP address or a CIDR range'))
    .optional()
    .describe('Caller addresses the key is accepted from; empty or absent: any'),
});

/** `POST /admin/tenants/{tenantId}/keys`: the new key. The secret is shown here only, never again. */
export const createdKeyResponse = z.object({
  apiKey: z.string().regex(/^ck_(test|live)_[0-9a-f]{32}$/),
  apiSecret: z.string(),
  environment,
  scopes: z.array(z.enum(CUSTODY_SCOPES)),
  ipAllowList: z.array(z.string()),
});

/** `POST /admin/keys/{apiKey}/revoke`. */
export const keyRevokedResponse = z.object({ apiKey: z.string(), revoked: z.literal(true) });

/** `GET /admin/tenants/{tenantId}/gas-station`: the address that pays the gas of live USDT withdrawals. */
export const gasStationResponse = z.object({
  tenantId: z.string().uuid(),
  network: z.literal('ethereum'),
  environment: z.literal('live'),
  address: z.string().regex(/^0x[0-9a-fA-F]{40}$/),
  derivationPath: z.string(),
});

/** One asset as one tenant has it: enabled unless the operator disabled it (`updatedAt` of that change). */
export const tenantAssetResponse = z.object({
  tenantId: z.string().uuid(),
  assetId: z.string().uuid(),
  symbol: z.string(),
  network: z.string(),
  enabled: z.boolean(),
  updatedAt: z.string().nullable(),
});

export const tenantAssetList = z.object({ items: z.array(tenantAssetResponse) });
