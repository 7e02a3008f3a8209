import type { Question } from '@tessera/contracts';
import { checkAnswer, missingAnswers } from '../questionnaires/questionnaire-answers';
import type { CheckResult } from '../reviews/check-results.repository';
import { verdict } from './check-results';

/**
 * questionnaire: every required question of the level's questionnaire is answered, and every stored answer is
 * still valid for its question's type (a question edited after the answer). Missing or invalid answers are RED
 * RETRY (`QUESTIONNAIRE_INCOMPLETE` / `INVALID_DATA`): the user answers again on the next session.
 */
export function questionnaireCheck(questions: Question[], answers: Record<string, unknown>): CheckResult {
  const missing = missingAnswers(questions, answers);
  const invalid = questions
    .filter((q) => answers[q.id] !== undefined && answers[q.id] !== null)
    .filter((q) => 'error' in checkAnswer(q, answers[q.id]))
    .map((q) => q.id);
  return verdict({ check: 'questionnaire', missing, invalid }, [
    ...(missing.length
      ? [{ label: 'QUESTIONNAIRE_INCOMPLETE', comment: `Unanswered: ${missing.join(', ')}` }]
      : []),
    ...(invalid.length ? [{ label: 'INVALID_DATA', comment: `Invalid: ${invalid.join(', ')}` }] : []),
  ]);
}
