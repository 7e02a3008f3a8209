import { Column, Entity, PrimaryColumn } from 'typeorm';

/**
 * A gas station's signed top-up, committed before it is sent (decision 0451). The transaction that records the
 * top-up (the station's next nonce moved past it) deletes this row; a row still here means an earlier top-up may
 * have reached the node without being recorded, and the next top-up of that station (or the next watcher round)
 * looks for it (and sends the same bytes again) before it takes a nonce: the node has it, so its nonce is spent;
 * or it is not on the chain, and it is dropped.
 */
@Entity({ name: 'evm_gas_top_up_intents' })
export class EvmGasTopUpIntentEntity {
  @PrimaryColumn('integer', { name: 'chain_id', primaryKeyConstraintName: 'evm_gas_top_up_intents_pkey' })
  chainId: number;

  /** The gas station (lowercase), the sender. */
  @PrimaryColumn('text', { name: 'station_address', primaryKeyConstraintName: 'evm_gas_top_up_intents_pkey' })
  stationAddress: string;

  @PrimaryColumn('bigint', { primaryKeyConstraintName: 'evm_gas_top_up_intents_pkey' })
  nonce: string;

  @Column('text', { name: 'tx_hash' })
  txHash: string;

  /** The signed transaction (0x-prefixed hex), sent again as it is. */
  @Column('text', { name: 'raw_tx' })
  rawTx: string;

  /** The address given gas (lowercase). */
  @Column('text', { name: 'to_address' })
  toAddress: string;

  /** Wei sent. */
  @Column('numeric', { precision: 78, scale: 0 })
  value: string;

  @Column('timestamptz', { name: 'created_at', default: () => 'now()' })
  createdAt: Date;
}
