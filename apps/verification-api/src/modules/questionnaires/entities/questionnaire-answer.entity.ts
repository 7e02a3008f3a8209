import { Column, Entity, PrimaryColumn } from 'typeorm';

/** The answers an end user gave in one enrollment to the level's attached questionnaire. */
@Entity({ name: 'questionnaire_answers' })
export class QuestionnaireAnswerEntity {
  @PrimaryColumn('uuid', { name: 'enrollment_id', primaryKeyConstraintName: 'PK_questionnaire_answers' })
  enrollmentId: string;

  @Column('uuid', { name: 'applicant_id' })
  applicantId: string;

  @Column('text', { name: 'questionnaire_id' })
  questionnaireId: string;

  @Column('jsonb', { default: () => `'{}'` })
  answers: Record<string, unknown>;

  @Column('timestamptz', { name: 'updated_at', default: () => 'now()' })
  updatedAt: Date;
}
