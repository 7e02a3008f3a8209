import { Column, Entity, Index, PrimaryColumn } from 'typeorm';

/**
 * The approval request of a withdrawal above a policy threshold: created with the withdrawal (same database
 * transaction), `pending` until the quorum (`approved`), a rejection (`rejected`) or the window's end
 * (`expired`). The withdrawal stays `Submitted` while this is pending.
 */
@Entity({ name: 'withdrawal_approvals' })
@Index('withdrawal_approvals_pending_idx', ['expiresAt'], { where: `"status" = 'pending'` })
export class WithdrawalApprovalEntity {
  @PrimaryColumn('uuid', { name: 'transaction_id' })
  transactionId: string;

  @Column('uuid', { name: 'tenant_id' })
  tenantId: string;

  @Column('text')
  environment: string;

  /** The API key that submitted the withdrawal: it may not approve or reject it. */
  @Column('text', { name: 'requested_by' })
  requestedBy: string;

  @Column('integer')
  required: number;

  @Column('text', { array: true })
  approvers: string[];

  /** pending, approved, rejected, expired */
  @Column('text')
  status: string;

  @Column('timestamptz', { name: 'expires_at' })
  expiresAt: Date;

  @Column('timestamptz', { name: 'decided_at', nullable: true })
  decidedAt: Date | null;

  @Column('text', { nullable: true })
  reason: string | null;

  @Column('timestamptz', { name: 'created_at', default: () => 'now()' })
  createdAt: Date;
}
