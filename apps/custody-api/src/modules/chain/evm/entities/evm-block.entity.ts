import { Column, Entity, PrimaryColumn } from 'typeorm';

/** The hash of each recently scanned block, to notice a reorg (a stored hash no longer canonical). */
@Entity({ name: 'evm_blocks' })
export class EvmBlockEntity {
  @PrimaryColumn('integer', { name: 'chain_id' })
  chainId: number;

  @PrimaryColumn('bigint')
  number: string;

  @Column('text')
  hash: string;
}
