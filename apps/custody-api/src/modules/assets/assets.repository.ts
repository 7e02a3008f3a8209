import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { rowsOf } from '../ledger/ledger';
import { AssetEntity } from './entities/asset.entity';

/** A tenant's stored setting for one asset (absent: enabled). */
export interface TenantAssetSetting {
  assetId: string;
  enabled: boolean;
  updatedAt: Date;
}

@Injectable()
export class AssetsRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /** Every seeded asset, the globally disabled ones included (`enabled` says which). */
  listAll(): Promise<AssetEntity[]> {
    return this.db.getRepository(AssetEntity).find({ order: { symbol: 'ASC' } });
  }

  /** The ids of the assets the operator disabled for the tenant. */
  async disabledFor(tenantId: string): Promise<string[]> {
    const rows: { assetId: string }[] = await this.db.query(
      `SELECT "asset_id" AS "assetId" FROM "tenant_assets" WHERE "tenant_id" = $1 AND NOT "enabled"`,
      [tenantId],
    );
    return rows.map((r) => r.assetId);
  }

  async tenantExists(tenantId: string): Promise<boolean> {
    const rows: unknown[] = await this.db.query(`SELECT 1 FROM "tenants" WHERE "id" = $1`, [tenantId]);
    return rows.length > 0;
  }

  /** The tenant's stored settings; undefined when the tenant does not exist. */
  async settings(tenantId: string): Promise<TenantAssetSetting[] | undefined> {
    if (!(await this.tenantExists(tenantId))) return undefined;
    return this.db.query(
      `SELECT "asset_id" AS "assetId", "enabled", "updated_at" AS "updatedAt" FROM "tenant_assets"
       WHERE "tenant_id" = $1`,
      [tenantId],
    );
  }

  /** Upserts the tenant's setting for the asset; undefined when the tenant does not exist. */
  async setEnabled(
    tenantId: string,
    assetId: string,
    enabled: boolean,
  ): Promise<TenantAssetSetting | undefined> {
    const rows = rowsOf<TenantAssetSetting>(
      await this.db.query(
        `INSERT INTO "tenant_assets" ("tenant_id", "asset_id", "enabled", "updated_at")
         SELECT $1, $2, $3, now() WHERE EXISTS (SELECT 1 FROM "tenants" WHERE "id" = $1)
         ON CONFLICT ("tenant_id", "asset_id") DO UPDATE SET "enabled" = EXCLUDED."enabled", "updated_at" = now()
         RETURNING "asset_id" AS "assetId", "enabled", "updated_at" AS "updatedAt"`,
        [tenantId, assetId, enabled],
      ),
    );
    return rows[0];
  }
}
