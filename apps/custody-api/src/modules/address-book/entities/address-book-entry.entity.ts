import { Column, CreateDateColumn, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';

/** A withdrawal destination the tenant approved; withdrawals may only target these. */
@Entity({ name: 'address_book' })
@Index('address_book_lookup_idx', ['tenantId', 'environment', 'assetId', 'address'])
export class AddressBookEntryEntity {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column('uuid', { name: 'tenant_id' })
  tenantId: string;

  @Column('text')
  environment: string;

  @Column('uuid', { name: 'asset_id' })
  assetId: string;

  @Column('text')
  address: string;

  @Column('text', { nullable: true })
  tag: string | null;

  @Column('text')
  label: string;

  @CreateDateColumn({ type: 'timestamptz', name: 'created_at' })
  createdAt: Date;
}
