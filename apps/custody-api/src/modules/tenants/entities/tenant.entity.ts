import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn } from 'typeorm';

/** A tenant of the custody API: it owns API keys, vaults, wallets and transactions. */
@Entity({ name: 'tenants' })
export class TenantEntity {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column('text')
  name: string;

  /** The tenant's BIP32 seed, sealed with SecretBox (purpose `custody-hd-seed`, associated data = id). */
  @Column('text', { name: 'hd_seed_sealed', nullable: true })
  hdSeedSealed: string | null;

  /** Next BIP44 address index / XRP destination tag; bumped in the wallet's creating transaction. */
  @Column('integer', { name: 'next_address_index', default: 0 })
  nextAddressIndex: number;

  @CreateDateColumn({ type: 'timestamptz', name: 'created_at' })
  createdAt: Date;
}
