import { Injectable } from '@nestjs/common';
import { IpAllowList, randomSecret, SecretBox } from '@tessera/auth';
import { badRequest, CacheInvalidationService, notFound, type TtlCache } from '@tessera/platform';
import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { InjectEnv } from '../../common/config';
import type { Env } from '../../config/env';
import { cidrProblem } from '@tessera/auth';
import {
  createKeyInput,
  createTenantInput,
  CUSTODY_ALL_SCOPES as ALL_SCOPES,
  CUSTODY_SANDBOX_ONLY_SCOPES as SANDBOX_ONLY_SCOPES,
  CUSTODY_SCOPES as SCOPES,
} from '@tessera/contracts';
import { gasStationAddress, gasStationPath } from '../chain/evm/evm-keys';
import { TenantsRepository } from './tenants.repository';

/** The operator's key body (libs/contracts), with each allow-list entry checked as an IP address or CIDR. */
const createKeySchema = createKeyInput.extend({
  ipAllowList: z.array(z.string().refine((v) => !cidrProblem(v), 'Must be an IP address or CIDR')).optional(),
});

/** A verified key as the request guard needs it, with the secret opened. */
export interface ActiveKey {
  apiKey: string;
  tenantId: string;
  environment: 'test' | 'live';
  scopes: string[];
  allowList: IpAllowList;
  secret: string;
}

/** The preset `all` becomes every scope of the environment (live keys never get the sandbox-only ones). */
function expandScopes(scopes: string[], environment: 'test' | 'live'): string[] {
  if (!scopes.includes(ALL_SCOPES)) return scopes;
  return SCOPES.filter((s) => environment === 'test' || !SANDBOX_ONLY_SCOPES.includes(s));
}

const KEY_CACHE_MS = 5000;
const KEYS_CACHE = 'api-keys';

@Injectable()
export class TenantsService {
  private readonly keyBox: SecretBox;
  private readonly seedBox: SecretBox;
  /** Short in-process cache of verified keys; a revocation drops the key on every replica at once. */
  private readonly keyCache: TtlCache<ActiveKey | null>;

  constructor(
    private readonly repository: TenantsRepository,
    private readonly caches: CacheInvalidationService,
    @InjectEnv() env: Env,
  ) {
    this.keyCache = caches.cache(KEYS_CACHE, KEY_CACHE_MS);
    if (!env.SECRETS_MASTER_KEY) throw new Error('SECRETS_MASTER_KEY is required by the custody API');
    this.keyBox = new SecretBox(env.SECRETS_MASTER_KEY, 'custody-api-key');
    this.seedBox = new SecretBox(env.SECRETS_MASTER_KEY, 'custody-hd-seed');
  }

  async createTenant(input: unknown) {
    const { name } = createTenantInput.parse(input ?? {});
    const tenant = await this.repository.createTenant(name, (id) => this.seedBox.seal(randomBytes(32), id));
    return { id: tenant.id, name: tenant.name };
  }

  async createKey(tenantId: string, input: unknown) {
    const parsed = createKeySchema.parse(input ?? {});
    const body = { ...parsed, scopes: expandScopes(parsed.scopes, parsed.environment) };
    if (!(await this.repository.findTenant(tenantId))) throw notFound('Tenant not found');
    if (body.environment === 'live' && body.scopes.some((s) => SANDBOX_ONLY_SCOPES.includes(s))) {
      throw badRequest('sandbox:write is for test keys only', {
        scopes: ['sandbox:write is for test keys only'],
      });
    }
    const apiKey = `ck_${body.environment}_${randomBytes(16).toString('hex')}`;
    const apiSecret = randomSecret();
    await this.repository.insertKey({
      apiKey,
      tenantId,
      environment: body.environment,
      scopes: body.scopes,
      ipAllowList: body.ipAllowList ?? [],
      secretSealed: this.keyBox.seal(apiSecret, apiKey),
    });
    return {
      apiKey,
      apiSecret,
      environment: body.environment,
      scopes: body.scopes,
      ipAllowList: body.ipAllowList ?? [],
    };
  }

  async revokeKey(apiKey: string): Promise<{ apiKey: string; revoked: true }> {
    if (!(await this.repository.revokeKey(apiKey))) throw notFound('API key not found');
    await this.caches.invalidate(KEYS_CACHE, { keys: [apiKey] });
    return { apiKey, revoked: true };
  }

  /** The active key for X-API-Key, or null when unknown or revoked. */
  async activeKey(apiKey: string): Promise<ActiveKey | null> {
    if (!/^ck_(test|live)_[0-9a-f]{32}$/.test(apiKey)) return null;
    const cached = this.keyCache.get(apiKey);
    if (cached !== undefined) return cached;
    const version = this.keyCache.version;
    const row = await this.repository.findKey(apiKey);
    const key: ActiveKey | null =
      row && !row.revokedAt
        ? {
            apiKey: row.apiKey,
            tenantId: row.tenantId,
            environment: row.environment,
            scopes: row.scopes,
            allowList: new IpAllowList(row.ipAllowList),
            secret: this.keyBox.openText(row.secretSealed, row.apiKey),
          }
        : null;
    this.keyCache.set(apiKey, key, version);
    return key;
  }

  /**
   * The tenant's EVM gas station (docs/decisions/0212): the address that pays the gas of its live USDT
   * withdrawals, for the operator to fund with ETH.
   */
  async gasStation(tenantId: string) {
    const tenant = await this.repository.findTenant(tenantId);
    if (!tenant?.hdSeedSealed) throw notFound('Tenant not found');
    const seed = this.openSeed(tenant.id, tenant.hdSeedSealed);
    try {
      return {
        tenantId: tenant.id,
        network: 'ethereum',
        environment: 'live',
        address: gasStationAddress(seed, 'production'),
        derivationPath: gasStationPath('production'),
      };
    } finally {
      seed.fill(0);
    }
  }

  /** The tenant's BIP32 seed, opened for address derivation. */
  openSeed(tenantId: string, sealed: string): Buffer {
    return this.seedBox.open(sealed, tenantId);
  }
}
