import { Column, CreateDateColumn, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';
import type { LedgerKind } from './ledger';

/** Append-only: one row per balance change of one wallet; the sums of the deltas equal the balance row. */
@Entity({ name: 'ledger_entries' })
@Index('ledger_entries_wallet_idx', ['walletId'])
export class LedgerEntryEntity {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column('uuid', { name: 'wallet_id' })
  walletId: string;

  @Column('uuid', { name: 'transaction_id' })
  transactionId: string;

  /** One of LEDGER_KINDS (ledger.ts). */
  @Column('text')
  kind: LedgerKind;

  @Column('numeric', { name: 'total_delta', precision: 78, scale: 0 })
  totalDelta: string;

  @Column('numeric', { name: 'available_delta', precision: 78, scale: 0 })
  availableDelta: string;

  @Column('numeric', { name: 'pending_delta', precision: 78, scale: 0 })
  pendingDelta: string;

  @Column('numeric', { name: 'locked_delta', precision: 78, scale: 0 })
  lockedDelta: string;

  @CreateDateColumn({ type: 'timestamptz', name: 'created_at' })
  createdAt: Date;
}
