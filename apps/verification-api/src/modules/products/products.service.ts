import { Inject, Injectable } from '@nestjs/common';
import { hashSecret, randomSecret, SecretBox, secretMatchesHash } from '@tessera/auth';
import { APP_CONFIG, CacheInvalidationService, notFound, type TtlCache } from '@tessera/platform';
import { randomBytes } from 'node:crypto';
import type { Env } from '../../config/env';
import { type ApiKeyRow, ProductsRepository } from './products.repository';

export type Environment = 'production' | 'sandbox';

export interface IssuedKey {
  apiKey: string;
  apiSecret: string;
  environment: Environment;
}

/** The caller of a partner request, once its credential checked out. */
export interface PartnerContext {
  productId: string;
  apiKey: string;
  environment: Environment;
}

const KEY_PREFIX: Record<Environment, string> = { production: 'vk_live_', sandbox: 'vk_test_' };
/** Hashed when a key is unknown, so an unknown key costs the same as a wrong secret. */
const DUMMY_HASH = '0'.repeat(64);
const API_KEYS_CACHE = 'api-keys';

@Injectable()
export class ProductsService {
  private readonly pepper: Buffer;
  /** Known keys and, as null, unknown ones: both answer from memory, so neither costs a query the other skips. */
  private readonly keys: TtlCache<ApiKeyRow | null>;

  constructor(
    private readonly repository: ProductsRepository,
    private readonly caches: CacheInvalidationService,
    @Inject(APP_CONFIG) env: Env,
  ) {
    if (!env.SECRETS_MASTER_KEY) throw new Error('SECRETS_MASTER_KEY is required by verification-api');
    this.pepper = SecretBox.pepper(env.SECRETS_MASTER_KEY, 'verification-api-secret');
    this.keys = caches.cache(API_KEYS_CACHE, env.ROW_CACHE_TTL_MS);
  }

  createProduct(name: string) {
    return this.repository.createProduct(name);
  }

  async assertProduct(productId: string): Promise<void> {
    if (!(await this.repository.productExists(productId))) throw notFound('Product not found');
  }

  /** Mints a key pair; the secret is returned here once and only its keyed hash is kept. */
  async issueKey(productId: string, environment: Environment): Promise<IssuedKey> {
    await this.assertProduct(productId);
    const apiKey = `${KEY_PREFIX[environment]}${randomBytes(12).toString('hex')}`;
    const apiSecret = randomSecret();
    await this.repository.insertKey({
      apiKey,
      productId,
      environment,
      secretHash: hashSecret(apiSecret, this.pepper),
    });
    // A replica that cached this id as unknown (a guess before issuance) must see it now.
    await this.caches.invalidate(API_KEYS_CACHE, { keys: [apiKey] });
    return { apiKey, apiSecret, environment };
  }

  async deactivateKey(apiKey: string): Promise<void> {
    const found = await this.repository.deactivateKey(apiKey);
    if (!found) throw notFound('Key not found');
    // Every replica drops the key now (not after ROW_CACHE_TTL_MS), so it answers 401 at once everywhere.
    await this.caches.invalidate(API_KEYS_CACHE, { keys: [apiKey] });
  }

  /** The caller's context, or undefined for an unknown/deactivated key, a wrong secret or another environment. */
  async authenticate(
    apiKey: string,
    apiSecret: string,
    environment: string,
  ): Promise<PartnerContext | undefined> {
    const key = apiKey.length <= 64 ? await this.findKey(apiKey) : undefined;
    const secretMatches = secretMatchesHash(apiSecret, this.pepper, key?.secretHash ?? DUMMY_HASH);
    if (!key || !secretMatches || !key.active || key.environment !== environment) return undefined;
    return { productId: key.productId, apiKey: key.apiKey, environment: key.environment };
  }

  /**
   * Keys are cached briefly whether they exist or not (docs/decisions/0013): an unknown key used to cost a
   * database round trip that a known one did not, about 0.5 ms that told the two apart.
   */
  private async findKey(apiKey: string): Promise<ApiKeyRow | undefined> {
    const cached = this.keys.get(apiKey);
    if (cached !== undefined) return cached ?? undefined;
    const version = this.keys.version;
    const row = await this.repository.findKey(apiKey);
    this.keys.set(apiKey, row ?? null, version);
    return row;
  }
}
