import { Column, CreateDateColumn, Entity, Index, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';

/** A row of a company's ubos[] array, addressed by its never-reused uboIndex. */
@Entity({ name: 'ubos' })
@Index('ubos_parent_index_key', ['parentApplicantId', 'uboIndex'], { unique: true })
export class UboEntity {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column('uuid', { name: 'parent_applicant_id' })
  parentApplicantId: string;

  @Column('integer', { name: 'ubo_index' })
  uboIndex: number;

  @Column('text', { name: 'full_name' })
  fullName: string;

  @Column('text', { name: 'date_of_birth', nullable: true })
  dateOfBirth: string | null;

  /** Decimal string on the wire, numeric here. */
  @Column('numeric', { name: 'ownership_percent', precision: 5, scale: 2, nullable: true })
  ownershipPercent: string | null;

  @Column('jsonb', { default: () => `'[]'` })
  roles: string[];

  @Column('text', { nullable: true })
  email: string | null;

  @Column('text', { nullable: true })
  nationality: string | null;

  @Column('uuid', { name: 'linked_applicant_id', nullable: true })
  linkedApplicantId: string | null;

  @Column('text', { default: 'partner' })
  source: string;

  @Column('boolean', { name: 'identity_changed_after_spawn', default: false })
  identityChangedAfterSpawn: boolean;

  @Column('boolean', { default: false })
  removed: boolean;

  @CreateDateColumn({ type: 'timestamptz', name: 'created_at' })
  createdAt: Date;

  @UpdateDateColumn({ type: 'timestamptz', name: 'updated_at' })
  updatedAt: Date;
}
