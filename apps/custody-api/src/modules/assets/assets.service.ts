import { Injectable } from '@nestjs/common';
import type { AssetEntity } from './entities/asset.entity';
import { AssetsRepository } from './assets.repository';

const CACHE_MS = 10_000;

/** Enabled assets, cached briefly in process (they change only by migration or operator action). */
@Injectable()
export class AssetsService {
  private cache: { assets: AssetEntity[]; expires: number } | undefined;

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
}
