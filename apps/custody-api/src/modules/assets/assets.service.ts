import { Injectable } from '@nestjs/common';
import { badRequest, notFound } from '@tessera/platform';
import { isUuid } from '../../common/validation';
import type { AssetEntity } from './entities/asset.entity';
import { AssetsRepository, type TenantAssetSetting } from './assets.repository';

const CACHE_MS = 10_000;
const TENANT_CACHE_MS = 5_000;

/**
 * Enabled assets, cached briefly in process (they change only by migration or operator action), and each
 * tenant's disabled set, cached for 5 s: a change made through this process drops its tenant's entry at
 * once, other processes (replicas, the CLI) are seen within 5 s.
 */
@Injectable()
export class AssetsService {
  private cache: { assets: AssetEntity[]; expires: number } | undefined;
  private readonly disabledCache = new Map<string, { ids: ReadonlySet<string>; expires: number }>();

  constructor(private readonly repository: AssetsRepository) {}

  async list(): Promise<AssetEntity[]> {
    if (!this.cache || this.cache.expires < Date.now()) {
      this.cache = { assets: await this.repository.listEnabled(), expires: Date.now() + CACHE_MS };
    }
    return this.cache.assets;
  }

  async find(id: string): Promise<AssetEntity | undefined> {
    return (await this.list()).find((a) => a.id === id);
  }

  /** The ids of the assets disabled for the tenant (usually from memory: no database round trip). */
  async disabledFor(tenantId: string): Promise<ReadonlySet<string>> {
    const cached = this.disabledCache.get(tenantId);
    if (cached && cached.expires > Date.now()) return cached.ids;
    const ids = new Set(await this.repository.disabledFor(tenantId));
    if (this.disabledCache.size > 10_000) this.disabledCache.clear();
    this.disabledCache.set(tenantId, { ids, expires: Date.now() + TENANT_CACHE_MS });
    return ids;
  }

  /** GET /assets: the assets enabled for the tenant. */
  async listFor(tenantId: string): Promise<AssetEntity[]> {
    const [assets, disabled] = await Promise.all([this.list(), this.disabledFor(tenantId)]);
    return assets.filter((a) => !disabled.has(a.id));
  }

  /** 400 with `errors[field]` when the operator disabled the asset for the tenant. */
  async assertEnabledFor(tenantId: string, asset: AssetEntity, field: string): Promise<void> {
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
    const assets = await this.list();
    const asset = assets.find((a) => a.id === assetRef.toLowerCase() || a.symbol === assetRef.toUpperCase());
    if (!asset) throw notFound('Asset not found');
    const setting = isUuid(tenantId)
      ? await this.repository.setEnabled(tenantId, asset.id, enabled)
      : undefined;
    if (!setting) throw notFound('Tenant not found');
    this.disabledCache.delete(tenantId);
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
