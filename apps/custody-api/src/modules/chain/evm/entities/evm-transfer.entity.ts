import { Column, Entity, Index, PrimaryColumn } from 'typeorm';

/**
 * The on-chain side of a custody transaction on an EVM chain: for a deposit (`in`) the transfer found by the
 * scanner (tx hash and log index, -1 for a native transfer), for a withdrawal (`out`) what was signed and
 * broadcast (nonce, EIP-1559 fees, every hash sent, the fee held). Block number and hash are those of the
 * block that holds it, null while unmined or after a reorg dropped it.
 */
@Entity({ name: 'evm_transfers' })
@Index('evm_transfers_deposit_key', ['chainId', 'txHash', 'logIndex'], {
  unique: true,
  where: `"direction" = 'in' AND NOT "reorged"`,
})
@Index('evm_transfers_open_idx', ['chainId', 'direction'], { where: `NOT "settled"` })
export class EvmTransferEntity {
  @PrimaryColumn('uuid', { name: 'transaction_id' })
  transactionId: string;

  @Column('integer', { name: 'chain_id' })
  chainId: number;

  /** `in` (deposit) or `out` (withdrawal). */
  @Column('text')
  direction: string;

  @Column('text', { name: 'tx_hash', nullable: true })
  txHash: string | null;

  /** Log index of an ERC-20 Transfer; -1 for a native transfer. */
  @Column('integer', { name: 'log_index', default: -1 })
  logIndex: number;

  @Column('text', { name: 'from_address' })
  fromAddress: string;

  @Column('text', { name: 'to_address' })
  toAddress: string;

  @Column('bigint', { name: 'block_number', nullable: true })
  blockNumber: string | null;

  @Column('text', { name: 'block_hash', nullable: true })
  blockHash: string | null;

  @Column('integer', { default: 0 })
  confirmations: number;

  /** A deposit whose block left the canonical chain (it failed, or its credit is flagged for review). */
  @Column('boolean', { default: false })
  reorged: boolean;

  /** A credited deposit whose block left the canonical chain and has not come back: flagged for review. */
  @Column('boolean', { name: 'orphaned_after_credit', default: false })
  orphanedAfterCredit: boolean;

  /** True once the transaction reached a terminal status: the watcher no longer looks at it. */
  @Column('boolean', { default: false })
  settled: boolean;

  @Column('bigint', { nullable: true })
  nonce: string | null;

  @Column('numeric', { name: 'gas_limit', precision: 78, scale: 0, nullable: true })
  gasLimit: string | null;

  @Column('numeric', { name: 'max_fee_per_gas', precision: 78, scale: 0, nullable: true })
  maxFeePerGas: string | null;

  @Column('numeric', { name: 'max_priority_fee_per_gas', precision: 78, scale: 0, nullable: true })
  maxPriorityFeePerGas: string | null;

  /** Wei held on `feeWalletId` for the network fee (native withdrawals), until the receipt gives the real fee. */
  @Column('numeric', { name: 'fee_held', precision: 78, scale: 0, nullable: true })
  feeHeld: string | null;

  @Column('uuid', { name: 'fee_wallet_id', nullable: true })
  feeWalletId: string | null;

  /** Every hash broadcast for this nonce (a fee bump replaces the transaction under a new hash). */
  @Column('text', { name: 'sent_hashes', array: true, default: () => `'{}'` })
  sentHashes: string[];

  @Column('timestamptz', { name: 'broadcast_at', nullable: true })
  broadcastAt: Date | null;

  @Column('timestamptz', { name: 'created_at', default: () => 'now()' })
  createdAt: Date;

  @Column('timestamptz', { name: 'updated_at', default: () => 'now()' })
  updatedAt: Date;
}
