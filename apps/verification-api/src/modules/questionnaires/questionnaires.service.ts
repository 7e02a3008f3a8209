import { Injectable } from '@nestjs/common';
import type { QuestionnaireCreateInput } from '@tessera/contracts';
import { badRequest, conflict, notFound } from '@tessera/platform';
import { verificationSubmitted } from '../sessions/open-session-lock';
import { checkAnswer, missingAnswers } from './questionnaire-answers';
import { type QuestionnaireRow, QuestionnairesRepository } from './questionnaires.repository';

export const toQuestionnaireView = (q: QuestionnaireRow) => ({
  id: q.id,
  title: q.title,
  questions: q.questions,
  createdAtUtc: new Date(q.createdAt).toISOString(),
});

export interface AnswerContext {
  productId: string;
  applicantId: string;
  enrollmentId: string;
  questionnaireId: string;
}

@Injectable()
export class QuestionnairesService {
  constructor(private readonly repository: QuestionnairesRepository) {}

  async create(productId: string, input: QuestionnaireCreateInput) {
    const row = await this.repository.create(productId, input);
    if (!row) throw conflict(`Questionnaire ${input.id} already exists`);
    return toQuestionnaireView(row);
  }

  async get(productId: string, id: string) {
    const row = await this.repository.find(productId, id);
    if (!row) throw notFound('Questionnaire not found');
    return toQuestionnaireView(row);
  }

  /** 400 when a level names a questionnaire the product does not have. */
  async assertExists(productId: string, id: string | null | undefined): Promise<void> {
    if (id && !(await this.repository.find(productId, id))) {
      throw badRequest(`attachedQuestionnaireId: questionnaire ${id} does not exist`);
    }
  }

  /** The questionnaire (null when the level attaches none or it is gone) and the enrollment's answers. */
  async forEnrollment(productId: string, questionnaireId: string | null, enrollmentId: string) {
    const questionnaire = questionnaireId
      ? await this.repository.find(productId, questionnaireId)
      : undefined;
    if (!questionnaire) return null;
    const answers = await this.repository.answers(enrollmentId);
    return {
      questionnaire: toQuestionnaireView(questionnaire),
      answers,
      missing: missingAnswers(questionnaire.questions, answers),
    };
  }

  /**
   * Validates every answer against its question (400 naming the first bad one, nothing saved), merges them
   * into the enrollment's answers and answers `{answers, missing}`.
   */
  async answer(ctx: AnswerContext, answers: Record<string, unknown>) {
    const questionnaire = await this.repository.find(ctx.productId, ctx.questionnaireId);
    if (!questionnaire) throw conflict('The level has no questionnaire to answer');
    const byId = new Map(questionnaire.questions.map((q) => [q.id, q]));
    const values: Record<string, unknown> = {};
    const cleared: string[] = [];
    for (const [id, raw] of Object.entries(answers)) {
      const question = byId.get(id);
      if (!question) throw badRequest(`answers.${id}: no such question`);
      const checked = checkAnswer(question, raw);
      if ('error' in checked) throw badRequest(`answers.${id}: ${checked.error}`);
      if (checked.value === null) cleared.push(id);
      else values[id] = checked.value;
    }
    const stored = await this.repository.saveAnswers({ ...ctx, answers: values, cleared });
    if (stored === 'closed') throw verificationSubmitted();
    return { answers: stored, missing: missingAnswers(questionnaire.questions, stored) };
  }

  async missing(productId: string, questionnaireId: string, enrollmentId: string): Promise<string[]> {
    const found = await this.forEnrollment(productId, questionnaireId, enrollmentId);
    return found ? found.missing : [];
  }
}
