import { Check, Column, Entity, Index, PrimaryColumn } from 'typeorm';

/** A deposit, internal transfer or withdrawal; amounts in base units of the asset. */
@Entity({ name: 'transactions' })
@Index('transactions_list_idx', ['tenantId', 'environment', 'createdAt', 'id'])
@Check('transactions_amount_positive', '"amount" > 0')
// Unfinished rows only, for the stuck-transaction sweeper (StuckTransactionsRepository). No index names
// `status` or `updated_at`, which every move writes, so a move that is not terminal can be a HOT update
// (decision 0430).
@Index('transactions_unfinished_idx', ['createdAt'], { where: `"completed_at" IS NULL` })
// Withdrawals of the last 24 h per wallet and per vault and asset, for the velocity rules (decision 0220).
@Index('transactions_withdrawal_wallet_window_idx', ['walletId', 'createdAt'], {
  where: `"type" = 'Withdrawal'`,
})
@Index('transactions_withdrawal_vault_window_idx', ['vaultId', 'assetId', 'createdAt'], {
  where: `"type" = 'Withdrawal'`,
})
export class TransactionEntity {
  @PrimaryColumn('uuid')
  id: string;

  @Column('uuid', { name: 'tenant_id' })
  tenantId: string;

  @Column('text')
  environment: string;

  @Column('text')
  type: string;

  @Column('text')
  status: string;

  @Column('uuid', { name: 'vault_id' })
  vaultId: string;

  @Column('uuid', { name: 'asset_id' })
  assetId: string;

  @Column('uuid', { name: 'source_wallet_id', nullable: true })
  sourceWalletId: string | null;

  @Column('uuid', { name: 'destination_wallet_id', nullable: true })
  destinationWalletId: string | null;

  /** The wallet whose balance this transaction changes (destination for deposits). */
  @Column('uuid', { name: 'wallet_id' })
  walletId: string;

  @Column('numeric', { precision: 78, scale: 0 })
  amount: string;

  @Column('text', { name: 'source_address' })
  sourceAddress: string;

  @Column('text', { name: 'destination_address' })
  destinationAddress: string;

  @Column('text', { name: 'destination_tag', nullable: true })
  destinationTag: string | null;

  @Column('text', { name: 'tx_hash', nullable: true })
  txHash: string | null;

  @Column('numeric', { name: 'network_fee', precision: 78, scale: 0, nullable: true })
  networkFee: string | null;

  @Column('text', { name: 'fee_currency', nullable: true })
  feeCurrency: string | null;

  @Column('text', { nullable: true })
  note: string | null;

  @Column('text', { name: 'failure_reason', nullable: true })
  failureReason: string | null;

  @Column('timestamptz', { name: 'created_at' })
  createdAt: Date;

  @Column('timestamptz', { name: 'updated_at' })
  updatedAt: Date;

  @Column('timestamptz', { name: 'completed_at', nullable: true })
  completedAt: Date | null;

  /** The sequence of the transaction's latest event (decision 0425): 1 at creation, +1 with every move. */
  @Column('bigint', { name: 'event_sequence', default: 1 })
  eventSequence: string;
}
