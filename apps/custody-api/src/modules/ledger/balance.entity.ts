import { Check, Column, Entity, PrimaryColumn } from 'typeorm';

/**
 * The authoritative balance of a wallet in base units, updated in the same transaction as the ledger
 * entries. total = available + locked (settled funds); pending = inbound deposits not yet completed.
 */
@Entity({ name: 'balances' })
@Check('balances_available_non_negative', '"available" >= 0')
@Check('balances_locked_non_negative', '"locked" >= 0')
@Check('balances_pending_non_negative', '"pending" >= 0')
@Check('balances_total_consistent', '"total" = "available" + "locked"')
export class BalanceEntity {
  @PrimaryColumn('uuid', { name: 'wallet_id' })
  walletId: string;

  @Column('numeric', { precision: 78, scale: 0, default: 0 })
  total: string;

  @Column('numeric', { precision: 78, scale: 0, default: 0 })
  available: string;

  @Column('numeric', { precision: 78, scale: 0, default: 0 })
  pending: string;

  @Column('numeric', { precision: 78, scale: 0, default: 0 })
  locked: string;

  @Column('timestamptz', { name: 'updated_at', default: () => 'now()' })
  updatedAt: Date;
}
