import {
  Check,
  Column,
  CreateDateColumn,
  Entity,
  Index,
  PrimaryGeneratedColumn,
  UpdateDateColumn,
} from 'typeorm';
import type { StoredUpload } from '../../resources/enrollment-uploads';

export interface Presentation {
  lang?: string;
  theme?: 'light' | 'dark' | 'system';
  returnUrl?: string;
  successUrl?: string;
  errorUrl?: string;
}

/** One verification attempt of an applicant against a level, reachable through a short-code link. */
@Entity({ name: 'enrollments' })
@Check(
  'enrollments_status_check',
  `"status" IN ('open', 'submitted', 'in_review', 'completed', 'rejected', 'failed', 'expired', 'replaced')`,
)
@Index('enrollments_short_code_key', ['shortCode'], { unique: true })
@Index('enrollments_applicant_idx', ['applicantId'])
@Index('enrollments_expiry_idx', ['expiresAt'], { where: `"status" IN ('open', 'submitted', 'in_review')` })
export class EnrollmentEntity {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column('uuid', { name: 'product_id' })
  productId: string;

  @Column('uuid', { name: 'applicant_id' })
  applicantId: string;

  @Column('uuid', { name: 'level_id' })
  levelId: string;

  @Column('text', { name: 'short_code' })
  shortCode: string;

  @Column('text', { default: 'open' })
  status: string;

  @Column('jsonb', { default: () => `'{}'` })
  presentation: Presentation;

  /** The latest accepted upload of each page slot, by `uploadKey` (decision 0447). */
  @Column('jsonb', { default: () => `'{}'` })
  uploads: Record<string, StoredUpload>;

  @Column('timestamptz', { name: 'expires_at' })
  expiresAt: Date;

  @Column('timestamptz', { name: 'completed_at', nullable: true })
  completedAt: Date | null;

  @CreateDateColumn({ type: 'timestamptz', name: 'created_at' })
  createdAt: Date;

  @UpdateDateColumn({ type: 'timestamptz', name: 'updated_at' })
  updatedAt: Date;
}
