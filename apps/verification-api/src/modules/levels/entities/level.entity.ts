import {
  Check,
  Column,
  CreateDateColumn,
  Entity,
  Index,
  PrimaryGeneratedColumn,
  UpdateDateColumn,
} from 'typeorm';

export interface LevelStepConfig {
  kind: string;
  optional: boolean;
  config: Record<string, unknown>;
}

/** A verification level: a named recipe of steps, owned by one product. */
@Entity({ name: 'levels' })
@Check('levels_applicant_type_check', `"applicant_type" IN ('individual', 'company')`)
@Index('levels_product_name_key', ['productId', 'name'], { unique: true })
@Index('levels_one_default_per_type', ['productId', 'applicantType'], {
  unique: true,
  where: '"is_default"',
})
export class LevelEntity {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column('uuid', { name: 'product_id' })
  productId: string;

  @Column('text')
  name: string;

  @Column('text', { name: 'applicant_type' })
  applicantType: 'individual' | 'company';

  @Column('boolean', { name: 'is_active', default: true })
  isActive: boolean;

  @Column('boolean', { name: 'is_default', default: false })
  isDefault: boolean;

  @Column('jsonb', { default: () => `'[]'` })
  steps: LevelStepConfig[];

  @Column('text', { name: 'attached_questionnaire_id', nullable: true })
  attachedQuestionnaireId: string | null;

  @Column('jsonb', { name: 'personal_info_fields', default: () => `'[]'` })
  personalInfoFields: string[];

  @Column('jsonb', { name: 'personal_info_required_fields', default: () => `'[]'` })
  personalInfoRequiredFields: string[];

  @Column('jsonb', { name: 'company_data_fields', default: () => `'[]'` })
  companyDataFields: string[];

  @Column('jsonb', { name: 'company_required_fields', default: () => `'[]'` })
  companyRequiredFields: string[];

  @Column('jsonb', { name: 'company_required_documents', default: () => `'[]'` })
  companyRequiredDocuments: string[];

  @Column('integer', { name: 'company_documents_min_required', nullable: true })
  companyDocumentsMinRequired: number | null;

  @Column('jsonb', { name: 'company_legal_forms', default: () => `'[]'` })
  companyLegalForms: string[];

  @CreateDateColumn({ type: 'timestamptz', name: 'created_at' })
  createdAt: Date;

  @UpdateDateColumn({ type: 'timestamptz', name: 'updated_at' })
  updatedAt: Date;
}
