import { Column, Entity, PrimaryColumn, UpdateDateColumn } from 'typeorm';

/**
 * An operator's per-tenant setting for one asset. No row means enabled: every tenant starts with all the
 * seeded assets; disabling writes `enabled = false`, enabling again keeps the row with `enabled = true`.
 */
@Entity({ name: 'tenant_assets' })
export class TenantAssetEntity {
  @PrimaryColumn('uuid', { name: 'tenant_id' })
  tenantId: string;

  @PrimaryColumn('uuid', { name: 'asset_id' })
  assetId: string;

  @Column('boolean')
  enabled: boolean;

  @UpdateDateColumn({ type: 'timestamptz', name: 'updated_at' })
  updatedAt: Date;
}
