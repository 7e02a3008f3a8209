import { Column, CreateDateColumn, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';

/** One wallet per asset per vault. */
@Entity({ name: 'wallets' })
@Index('wallets_vault_asset_key', ['vaultId', 'assetId'], { unique: true })
export class WalletEntity {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column('uuid', { name: 'tenant_id' })
  tenantId: string;

  @Column('text')
  environment: string;

  @Column('uuid', { name: 'vault_id' })
  vaultId: string;

  @Column('uuid', { name: 'asset_id' })
  assetId: string;

  @Column('text', { default: '' })
  label: string;

  @Column('text', { default: 'Active' })
  status: string;

  @CreateDateColumn({ type: 'timestamptz', name: 'created_at' })
  createdAt: Date;
}
