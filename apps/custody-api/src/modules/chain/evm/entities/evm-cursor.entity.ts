import { Column, Entity, PrimaryColumn } from 'typeorm';

/** The deposit scanner's position on one EVM chain: every block below `nextBlock` has been scanned. */
@Entity({ name: 'evm_cursors' })
export class EvmCursorEntity {
  @PrimaryColumn('integer', { name: 'chain_id' })
  chainId: number;

  @Column('bigint', { name: 'next_block' })
  nextBlock: string;

  @Column('timestamptz', { name: 'updated_at', default: () => 'now()' })
  updatedAt: Date;
}
