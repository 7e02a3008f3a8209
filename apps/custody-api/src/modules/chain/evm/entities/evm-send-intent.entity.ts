import { Column, Entity, PrimaryColumn } from 'typeorm';

/**
 * A withdrawal's signed transaction, committed before it is sent (decision 0440). The broadcast's own database
 * transaction records the send (evm_transfers, the nonce) and deletes this row when it commits; a row still
 * here on the next attempt means an earlier attempt may have reached the node without being recorded, and the
 * broadcast looks for that transaction (and sends the same bytes again) instead of signing another. A fee bump's
 * replacement is committed here too (decision 0449): a row beside a recorded evm_transfers row is one, and the
 * watcher settles it (records it, or drops it) before it looks at the transfer's receipts.
 */
@Entity({ name: 'evm_send_intents' })
export class EvmSendIntentEntity {
  @PrimaryColumn('uuid', { name: 'transaction_id', primaryKeyConstraintName: 'evm_send_intents_pkey' })
  transactionId: string;

  @Column('integer', { name: 'chain_id' })
  chainId: number;

  @Column('text', { name: 'from_address' })
  fromAddress: string;

  @Column('bigint')
  nonce: string;

  @Column('text', { name: 'tx_hash' })
  txHash: string;

  /** The signed transaction (0x-prefixed hex), sent again as it is. */
  @Column('text', { name: 'raw_tx' })
  rawTx: string;

  @Column('numeric', { name: 'gas_limit', precision: 78, scale: 0 })
  gasLimit: string;

  @Column('numeric', { name: 'max_fee_per_gas', precision: 78, scale: 0 })
  maxFeePerGas: string;

  @Column('numeric', { name: 'max_priority_fee_per_gas', precision: 78, scale: 0 })
  maxPriorityFeePerGas: string;

  @Column('timestamptz', { name: 'created_at', default: () => 'now()' })
  createdAt: Date;
}
