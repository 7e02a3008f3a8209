import { Column, CreateDateColumn, Entity, Index, PrimaryColumn } from 'typeorm';

/** One stored capture: its bytes live in blob storage under `storageKey`; re-uploads to a slot deactivate it. */
@Entity({ name: 'resources' })
@Index('resources_enrollment_slot_idx', ['tenantId', 'enrollmentId', 'slot'])
export class ResourceEntity {
  @PrimaryColumn('uuid')
  id: string;

  @Column('text', { name: 'tenant_id' })
  tenantId: string;

  @Column('uuid', { name: 'enrollment_id' })
  enrollmentId: string;

  @Column('text')
  slot: string;

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
