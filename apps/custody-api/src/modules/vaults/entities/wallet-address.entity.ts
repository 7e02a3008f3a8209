import { Column, CreateDateColumn, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';

/** A deposit address of a wallet, derived from the tenant's HD seed at `derivationPath`. */
@Entity({ name: 'wallet_addresses' })
@Index('wallet_addresses_wallet_idx', ['walletId', 'createdAt'])
export class WalletAddressEntity {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column('uuid', { name: 'wallet_id' })
  walletId: string;

  @Column('text')
  address: string;

  @Column('text', { nullable: true })
  tag: string | null;

  @Column('text', { name: 'derivation_path' })
  derivationPath: string;

  @CreateDateColumn({ type: 'timestamptz', name: 'created_at' })
  createdAt: Date;
}
