import { Check, Column, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';

/** Progress of one step kind for one applicant. A step with no row is `pending`. */
@Entity({ name: 'applicant_steps' })
@Index('applicant_steps_applicant_kind_key', ['applicantId', 'kind'], { unique: true })
@Index('applicant_steps_submitted_idx', ['updatedAt'], { where: `"review_status" = 'submitted'` })
@Check(
  'applicant_steps_review_status_check',
  `"review_status" IN ('pending', 'submitted', 'in_review', 'completed', 'awaitingOperatorReview', 'expired')`,
)
@Check('applicant_steps_review_answer_check', `"review_answer" IN ('GREEN', 'RED')`)
@Check('applicant_steps_reject_type_check', `"review_reject_type" IN ('FINAL', 'RETRY', 'EXPIRED')`)
export class ApplicantStepEntity {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column('uuid', { name: 'applicant_id' })
  applicantId: string;

  @Column('uuid', { name: 'enrollment_id', nullable: true })
  enrollmentId: string | null;

  @Column('text')
  kind: string;

  @Column('text', { name: 'review_status', default: 'pending' })
  reviewStatus: string;

  @Column('text', { name: 'review_answer', nullable: true })
  reviewAnswer: string | null;

  @Column('text', { name: 'review_reject_type', nullable: true })
  reviewRejectType: string | null;

  @Column('jsonb', { name: 'reject_labels', default: () => `'[]'` })
  rejectLabels: string[];

  /** Operator's comment for the applicant (the decision's `moderationComment`). */
  @Column('text', { name: 'moderation_comment', nullable: true })
  moderationComment: string | null;

  /** Operator's comment for the partner only (the decision's `clientComment`). */
  @Column('text', { name: 'client_comment', nullable: true })
  clientComment: string | null;

  /** What the automatic check found (screening matches, missing items...), for the operator. */
  @Column('jsonb', { name: 'check_result', nullable: true })
  checkResult: Record<string, unknown> | null;

  @Column('timestamptz', { name: 'updated_at', default: () => 'now()' })
  updatedAt: Date;
}
