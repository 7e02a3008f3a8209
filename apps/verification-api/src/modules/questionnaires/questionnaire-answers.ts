import { isCalendarDate, type Question } from '@tessera/contracts';

/**
 * Checks one answer against its question's type; answers the normalised value or an error message.
 * null (or "" / [] for text and multiselect) means "no answer" and clears a stored one; so does a text answer
 * that is only whitespace, which would otherwise count as answering a required question.
 */
export function checkAnswer(question: Question, value: unknown): { value: unknown } | { error: string } {
  if (value === null || value === '' || (Array.isArray(value) && value.length === 0)) return { value: null };
  switch (question.type) {
    case 'text':
      if (typeof value !== 'string') return { error: 'must be a string' };
      if (value.length > 2000) return { error: 'must be at most 2000 characters' };
      return { value: value.trim() || null };
    case 'select':
      if (typeof value !== 'string' || !question.options?.includes(value)) {
        return { error: 'must be one of the options' };
      }
      return { value };
    case 'multiselect':
      if (
        !Array.isArray(value) ||
        !value.every((v) => typeof v === 'string' && question.options?.includes(v))
      ) {
        return { error: 'must be an array of the options' };
      }
      return { value: [...new Set(value as string[])] };
    case 'boolean':
      if (typeof value !== 'boolean') return { error: 'must be true or false' };
      return { value };
    case 'date':
      if (typeof value !== 'string' || !isCalendarDate(value)) return { error: 'must be a date YYYY-MM-DD' };
      return { value };
    case 'number':
      if (typeof value !== 'number' || !Number.isFinite(value)) return { error: 'must be a number' };
      return { value };
    default:
      return { error: 'has an unknown question type' };
  }
}

const unanswered = (value: unknown) =>
  value === undefined || value === null || (typeof value === 'string' && value.trim() === '');

/** Required questions without an answer, in questionnaire order (a blank text stored earlier counts as none). */
export const missingAnswers = (questions: Question[], answers: Record<string, unknown>): string[] =>
  questions
    .filter((q) => q.required)
    .filter((q) => unanswered(answers[q.id]))
    .map((q) => q.id);
