import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { AssetEntity } from './entities/asset.entity';

@Injectable()
export class AssetsRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  listEnabled(): Promise<AssetEntity[]> {
    return this.db.getRepository(AssetEntity).find({ where: { enabled: true }, order: { symbol: 'ASC' } });
  }
}
