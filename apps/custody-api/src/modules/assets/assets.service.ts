import { Injectable } from '@nestjs/common';
import { badRequest, CacheInvalidationService, notFound, TtlCache } from '@tessera/platform';
import { isUuid } from '../../common/validation';
import type { AssetEntity } from './entities/asset.entity';
import { AssetsRepository, type TenantAssetSetting } from './assets.repository';

const CACHE_MS = 10_000;
const TENANT_CACHE_MS = 5_000;
const DISABLED_CACHE = 'tenant-disabled-assets';

/**
 * Assets, cached briefly in process (they change only by migration), and each tenant's disabled set, cached for
 * 5 s: an operator change (API or CLI) drops that tenant's entry on every replica at once. An asset disabled
 * globally (`assets.enabled`, the migration-level switch) is left out of everything that starts something new
 * (`list`, `findByRef`), but the wallets, balances and transactions that already hold it still find it
 * (`heldAsset`: decision 0203).
 */
@Injectable()
export class AssetsService {
  private readonly cache = new TtlCache<AssetEntity[]>(CACHE_MS);
  private readonly disabledCache: TtlCache<ReadonlySet<string>>;

  constructor(
    private readonly repository: AssetsRepository,
    private readonly caches: CacheInvalidationService,
  ) {
    this.disabledCache = caches.cache(DISABLED_CACHE, TENANT_CACHE_MS);
  }

  private async all(): Promise<AssetEntity[]> {
    const cached = this.cache.get('all');
    if (cached) return cached;
    const assets = await this.repository.listAll();
    this.cache.set('all', assets);
    return assets;
  }

  /** The enabled assets. */
  async list(): Promise<AssetEntity[]> {
    return (await this.all()).filter((a) => a.enabled);
  }

  /** Any asset by id, a globally disabled one included. */
  async findAny(id: string): Promise<AssetEntity | undefined> {
    return (await this.all()).find((a) => a.id === id);
  }

  /**
   * The asset of something that exists (a wallet, a transaction), even when it has been disabled globally since:
   * reading it stays allowed, and what would start something new checks `assertEnabledFor`.
   */
  async heldAsset(id: string): Promise<AssetEntity> {
    const asset = await this.findAny(id);
    if (!asset) throw new Error(`Asset ${id} is not seeded`);
    return asset;
  }

  /** An asset by its id or its symbol (`eth`, `USDT`): what a person types is accepted as well as the id. */
  async findByRef(ref: string): Promise<AssetEntity | undefined> {
    const id = ref.toLowerCase();
    const symbol = ref.toUpperCase();
    return (await this.list()).find((a) => a.id === id || a.symbol === symbol);
  }

  /** The ids of the assets disabled for the tenant (usually from memory: no database round trip). */
  async disabledFor(tenantId: string): Promise<ReadonlySet<string>> {
    const cached = this.disabledCache.get(tenantId);
    if (cached) return cached;
    const version = this.disabledCache.version;
    const ids = new Set(await this.repository.disabledFor(tenantId));
    this.disabledCache.set(tenantId, ids, version);
    return ids;
  }

  /** GET /assets: the assets enabled for the tenant. */
  async listFor(tenantId: string): Promise<AssetEntity[]> {
    const [assets, disabled] = await Promise.all([this.list(), this.disabledFor(tenantId)]);
    return assets.filter((a) => !disabled.has(a.id));
  }

  /**
   * The asset a body field names (its id in any case, or its symbol) for something new (a wallet, an address-book
   * entry): 400 on `assetId` when unknown or disabled, globally or for the tenant. A body field, not the path's
   * resource, so never a 404.
   */
  async startableByRef(tenantId: string, ref: string): Promise<AssetEntity> {
    const asset = await this.findByRef(ref);
    if (!asset) throw badRequest('Unknown asset', { assetId: ['Unknown or disabled asset'] });
    await this.assertEnabledFor(tenantId, asset, 'assetId');
    return asset;
  }

  /** 400 with `errors[field]` when the asset is disabled globally or the operator disabled it for the tenant. */
  async assertEnabledFor(tenantId: string, asset: AssetEntity, field: string): Promise<void> {
    if (!asset.enabled) {
      throw badRequest(`Asset ${asset.symbol} is disabled`, {
        [field]: [`${asset.symbol} is disabled: nothing new can be started with it`],
      });
    }
    if ((await this.disabledFor(tenantId)).has(asset.id)) {
      throw badRequest(`Asset ${asset.symbol} is disabled for this tenant`, {
        [field]: [`${asset.symbol} is disabled for this tenant`],
      });
    }
  }

  toDto(asset: AssetEntity) {
    return {
      id: asset.id,
      symbol: asset.symbol,
      network: asset.network,
      decimals: asset.decimals,
      type: asset.type,
      ...(asset.contractAddress ? { contractAddress: asset.contractAddress } : {}),
      requiresTag: asset.requiresTag,
      confirmations: asset.confirmations,
    };
  }

  /** Operator: every asset with its state for the tenant. */
  async tenantAssets(tenantRef: string) {
    const tenantId = tenantRef.toLowerCase();
    const settings = isUuid(tenantId) ? await this.repository.settings(tenantId) : undefined;
    if (!settings) throw notFound('Tenant not found');
    const byAsset = new Map(settings.map((s) => [s.assetId, s]));
    return { items: (await this.list()).map((a) => tenantAssetView(tenantId, a, byAsset.get(a.id))) };
  }

  /** Operator: enables or disables an asset (id or symbol) for the tenant; answers the tenant's view of it. */
  async setEnabledFor(tenantRef: string, assetRef: string, enabled: boolean) {
    const tenantId = tenantRef.toLowerCase();
    const asset = await this.findByRef(assetRef);
    if (!asset) throw notFound('Asset not found');
    const setting = isUuid(tenantId)
      ? await this.repository.setEnabled(tenantId, asset.id, enabled)
      : undefined;
    if (!setting) throw notFound('Tenant not found');
    await this.caches.invalidate(DISABLED_CACHE, { keys: [tenantId] });
    return tenantAssetView(tenantId, asset, setting);
  }
}

const tenantAssetView = (tenantId: string, asset: AssetEntity, setting: TenantAssetSetting | undefined) => ({
  tenantId,
  assetId: asset.id,
  symbol: asset.symbol,
  network: asset.network,
  enabled: setting?.enabled ?? true,
  updatedAt: setting ? new Date(setting.updatedAt).toISOString() : null,
});
