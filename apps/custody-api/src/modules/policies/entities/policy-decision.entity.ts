import { Column, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';

/**
 * Append-only audit of every policy decision on a withdrawal: the evaluation result of each configured rule at
 * submission, every approval and rejection, the quorum and the expiry. One approval per key and transaction.
 */
@Entity({ name: 'policy_decisions' })
@Index('policy_decisions_transaction_idx', ['transactionId', 'createdAt'])
@Index('policy_decisions_one_vote_key', ['transactionId', 'keyId'], {
  unique: true,
  where: `"kind" IN ('approval', 'rejection')`,
})
export class PolicyDecisionEntity {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column('uuid', { name: 'transaction_id' })
  transactionId: string;

  /** evaluation, approval, rejection, quorum, expiry */
  @Column('text')
  kind: string;

  /** The rule an evaluation row is about (null for votes, quorum and expiry). */
  @Column('text', { nullable: true })
  rule: string | null;

  @Column('text')
  outcome: string;

  @Column('text', { name: 'key_id', nullable: true })
  keyId: string | null;

  @Column('integer', { name: 'policy_version', nullable: true })
  policyVersion: number | null;

  @Column('jsonb')
  detail: Record<string, unknown>;

  @Column('timestamptz', { name: 'created_at', default: () => 'clock_timestamp()' })
  createdAt: Date;
}
