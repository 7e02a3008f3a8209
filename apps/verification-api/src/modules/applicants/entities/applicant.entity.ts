import {
  Check,
  Column,
  CreateDateColumn,
  Entity,
  Index,
  PrimaryGeneratedColumn,
  UpdateDateColumn,
} from 'typeorm';

/** An individual or company being verified; unique per (product, externalUserId). */
@Entity({ name: 'applicants' })
@Check('applicants_type_check', `"type" IN ('individual', 'company')`)
@Check(
  'applicants_status_check',
  `"status" IN ('init', 'pending', 'in_review', 'awaiting_user', 'approved', 'rejected', 'expired', 'deactivated')`,
)
@Check('applicants_risk_level_check', `"risk_level" IN ('unknown', 'low', 'medium', 'high')`)
// Leading external_user_id: serves both the tenant lookup and the "exists in another product" probe.
@Index('applicants_external_user_product_key', ['externalUserId', 'productId'], { unique: true })
@Index('applicants_level_idx', ['levelId'])
@Index('applicants_parent_idx', ['parentApplicantId'], { where: '"parent_applicant_id" IS NOT NULL' })
export class ApplicantEntity {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column('uuid', { name: 'product_id' })
  productId: string;

  @Column('text', { name: 'external_user_id' })
  externalUserId: string;

  @Column('text')
  type: 'individual' | 'company';

  @Column('uuid', { name: 'level_id', nullable: true })
  levelId: string | null;

  @Column('text', { default: 'init' })
  status: string;

  @Column('text', { name: 'risk_level', default: 'unknown' })
  riskLevel: string;

  /** Identity fields under their level keys (incorporatedOn, legalAddress, registrationCountry...). */
  @Column('jsonb', { default: () => `'{}'` })
  info: Record<string, unknown>;

  @Column('integer', { default: 0 })
  attempt: number;

  /** Created through a sandbox credential (the `sandbox` flag of its webhook events). */
  @Column('boolean', { default: false })
  sandbox: boolean;

  @Column('text', { name: 'review_answer', nullable: true })
  reviewAnswer: string | null;

  @Column('text', { name: 'review_reject_type', nullable: true })
  reviewRejectType: string | null;

  @Column('jsonb', { name: 'reject_labels', default: () => `'[]'` })
  rejectLabels: string[];

  @Column('text', { name: 'moderation_comment', nullable: true })
  moderationComment: string | null;

  @Column('timestamptz', { name: 'reviewed_at', nullable: true })
  reviewedAt: Date | null;

  /** On the operator's blocklist: no new session link until removed. */
  @Column('boolean', { default: false })
  blocklisted: boolean;

  /** The status an operator's deactivation replaced; `activate` restores it. */
  @Column('text', { name: 'status_before_deactivation', nullable: true })
  statusBeforeDeactivation: string | null;

  /** Set on a child applicant spawned from a company's UBO row. */
  @Column('uuid', { name: 'parent_applicant_id', nullable: true })
  parentApplicantId: string | null;

  /**
   * When `companyChildrenCompleted` went out for this company (decision 0140): the roll-up's guarded UPDATE
   * (`WHERE children_completed_at IS NULL`) fires it once; spawning a new child opens the round again.
   */
  @Column('timestamptz', { name: 'children_completed_at', nullable: true })
  childrenCompletedAt: Date | null;

  /** The sequence of the applicant's latest outbox event (decision 0426): 1 at creation, bumped by each event. */
  @Column('bigint', { name: 'event_sequence', default: 1 })
  eventSequence: string;

  @Column('boolean', { name: 'has_no_ubos', default: false })
  hasNoUbos: boolean;

  @Column('boolean', { name: 'has_no_shareholders', default: false })
  hasNoShareholders: boolean;

  @Column('boolean', { name: 'has_no_directors', default: false })
  hasNoDirectors: boolean;

  @Column('boolean', { name: 'has_no_representatives', default: false })
  hasNoRepresentatives: boolean;

  @CreateDateColumn({ type: 'timestamptz', name: 'created_at' })
  createdAt: Date;

  @UpdateDateColumn({ type: 'timestamptz', name: 'updated_at' })
  updatedAt: Date;
}
