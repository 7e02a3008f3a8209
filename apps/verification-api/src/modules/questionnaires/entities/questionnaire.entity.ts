import { Column, CreateDateColumn, Entity, PrimaryColumn } from 'typeorm';
import type { Question } from '@tessera/contracts';

/** An operator-defined questionnaire of one product, attached to levels by `attachedQuestionnaireId`. */
@Entity({ name: 'questionnaires' })
export class QuestionnaireEntity {
  @PrimaryColumn('uuid', { name: 'product_id', primaryKeyConstraintName: 'PK_questionnaires' })
  productId: string;

  @PrimaryColumn('text', { primaryKeyConstraintName: 'PK_questionnaires' })
  id: string;

  @Column('text')
  title: string;

  @Column('jsonb')
  questions: Question[];

  @CreateDateColumn({ type: 'timestamptz', name: 'created_at' })
  createdAt: Date;
}
