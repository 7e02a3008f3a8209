import { Injectable } from '@nestjs/common';
import type { Question } from '@tessera/contracts';
import { DataSource } from 'typeorm';
import { lockOpenSession } from '../sessions/open-session-lock';
import { recordReviewEvent } from '../reviews/review-events';

export interface QuestionnaireRow {
  id: string;
  title: string;
  questions: Question[];
  createdAt: Date;
}

@Injectable()
export class QuestionnairesRepository {
  constructor(private readonly dataSource: DataSource) {}

  /** Inserts the questionnaire; undefined when the product already has one with this id. */
  async create(
    productId: string,
    input: { id: string; title: string; questions: Question[] },
  ): Promise<QuestionnaireRow | undefined> {
    const [row] = await this.dataSource.query<QuestionnaireRow[]>(
      `INSERT INTO questionnaires (product_id, id, title, questions) VALUES ($1, $2, $3, $4::jsonb)
       ON CONFLICT (product_id, id) DO NOTHING
       RETURNING id, title, questions, created_at AS "createdAt"`,
      [productId, input.id, input.title, JSON.stringify(input.questions)],
    );
    return row;
  }

  async find(productId: string, id: string): Promise<QuestionnaireRow | undefined> {
    const [row] = await this.dataSource.query<QuestionnaireRow[]>(
      `SELECT id, title, questions, created_at AS "createdAt" FROM questionnaires
        WHERE product_id = $1 AND id = $2`,
      [productId, id],
    );
    return row;
  }

  async answers(enrollmentId: string): Promise<Record<string, unknown>> {
    const [row] = await this.dataSource.query<{ answers: Record<string, unknown> }[]>(
      'SELECT answers FROM questionnaire_answers WHERE enrollment_id = $1',
      [enrollmentId],
    );
    return row?.answers ?? {};
  }

  /**
   * Merges the answers into the enrollment's stored ones and records the review event, in one transaction;
   * 'closed' (nothing saved) when the enrollment is no longer open under the applicant's lock.
   */
  async saveAnswers(input: {
    enrollmentId: string;
    applicantId: string;
    productId: string;
    questionnaireId: string;
    answers: Record<string, unknown>;
    cleared: string[];
  }): Promise<Record<string, unknown> | 'closed'> {
    return this.dataSource.transaction(async (manager) => {
      if (!(await lockOpenSession(manager, input.applicantId, input.enrollmentId))) return 'closed';
      const [row] = await manager.query<{ answers: Record<string, unknown> }[]>(
        `INSERT INTO questionnaire_answers (enrollment_id, applicant_id, questionnaire_id, answers)
         VALUES ($1, $2, $3, $4::jsonb)
         ON CONFLICT (enrollment_id) DO UPDATE
           SET answers = (questionnaire_answers.answers || excluded.answers) - $5::text[],
               questionnaire_id = excluded.questionnaire_id, updated_at = now()
         RETURNING answers`,
        [
          input.enrollmentId,
          input.applicantId,
          input.questionnaireId,
          JSON.stringify(input.answers),
          input.cleared,
        ],
      );
      await recordReviewEvent(
        manager,
        { id: input.applicantId, productId: input.productId },
        'questionnaire.answered',
        'sdk',
        {
          enrollmentId: input.enrollmentId,
          questionnaireId: input.questionnaireId,
          questions: Object.keys(input.answers),
        },
      );
      return row.answers;
    });
  }
}
