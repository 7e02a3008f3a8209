import { Column, CreateDateColumn, Entity, Index, PrimaryColumn } from 'typeorm';

/**
 * One stored upload: its bytes live in blob storage under `storageKey`. A re-upload to the same slot of the
 * same enrollment takes the next `seq` and deactivates this one, which stays stored and listed as history.
 */
@Entity({ name: 'resources' })
@Index('resources_slot_seq_key', ['enrollmentId', 'slot', 'seq'], { unique: true })
@Index('resources_active_slot_key', ['enrollmentId', 'slot'], { unique: true, where: '"active"' })
@Index('resources_applicant_idx', ['tenantId', 'applicantId', 'createdAt'])
export class ResourceEntity {
  @PrimaryColumn('uuid')
  id: string;

  /** The verification product (tenant) the upload belongs to. */
  @Column('text', { name: 'tenant_id' })
  tenantId: string;

  @Column('uuid', { name: 'applicant_id' })
  applicantId: string;

  @Column('uuid', { name: 'enrollment_id' })
  enrollmentId: string;

  @Column('text')
  slot: string;

  /** 1, 2, … within (enrollment, slot): part of the resource id, so historical uploads keep their own. */
  @Column('integer')
  seq: number;

  @Column('text')
  kind: string;

  @Column('text')
  mime: string;

  @Column('bigint', { name: 'size_bytes' })
  sizeBytes: string;

  @Column('char', { length: 64 })
  sha256: string;

  @Column('text', { name: 'storage_key' })
  storageKey: string;

  @Column('text', { name: 'document_type', nullable: true })
  documentType: string | null;

  @Column('text', { nullable: true })
  side: string | null;

  @Column('text', { nullable: true })
  source: string | null;

  @Column('boolean', { default: true })
  active: boolean;

  @CreateDateColumn({ type: 'timestamptz', name: 'created_at' })
  createdAt: Date;

  @Column('timestamptz', { name: 'superseded_at', nullable: true })
  supersededAt: Date | null;
}
