import { Column, Entity, PrimaryColumn } from 'typeorm';

/**
 * The chain this database has worked under a chain id, known by its genesis block's hash: a node answering the
 * same id with another genesis is another chain (a restarted local node, or a misconfigured URL; decision 0467).
 */
@Entity({ name: 'evm_chains' })
export class EvmChainEntity {
  @PrimaryColumn('integer', { name: 'chain_id', primaryKeyConstraintName: 'evm_chains_pkey' })
  chainId: number;

  @Column('text', { name: 'genesis_hash' })
  genesisHash: string;

  @Column('timestamptz', { name: 'recorded_at', default: () => 'now()' })
  recordedAt: Date;
}
