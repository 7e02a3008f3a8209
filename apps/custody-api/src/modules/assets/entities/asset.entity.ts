import { Column, Entity, PrimaryColumn } from 'typeorm';

/** An asset the custody API supports; seeded by migration (BTC, ETH, USDT, XRP). */
@Entity({ name: 'assets' })
export class AssetEntity {
  @PrimaryColumn('uuid')
  id: string;

  @Column('text', { unique: true })
  symbol: string;

  @Column('text')
  network: string;

  @Column('integer')
  decimals: number;

  @Column('text')
  type: 'native' | 'token';

  @Column('text', { name: 'contract_address', nullable: true })
  contractAddress: string | null;

  @Column('boolean', { name: 'requires_tag', default: false })
  requiresTag: boolean;

  @Column('integer')
  confirmations: number;

  @Column('boolean', { default: true })
  enabled: boolean;
}
