import { Column, CreateDateColumn, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';

/** One vault per end customer. `environment` separates sandbox (test keys) from production (live keys). */
@Entity({ name: 'vaults' })
@Index('vaults_external_id_key', ['tenantId', 'environment', 'externalId'], { unique: true })
@Index('vaults_list_idx', ['tenantId', 'environment', 'createdAt'])
export class VaultEntity {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column('uuid', { name: 'tenant_id' })
  tenantId: string;

  @Column('text')
  environment: string;

  @Column('text', { name: 'external_id' })
  externalId: string;

  @Column('text')
  name: string;

  @Column('text', { default: 'Active' })
  status: string;

  @CreateDateColumn({ type: 'timestamptz', name: 'created_at' })
  createdAt: Date;
}
