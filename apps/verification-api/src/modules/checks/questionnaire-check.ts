import type { Question } from '@tessera/contracts';
import { checkAnswer, missingAnswers } from '../questionnaires/questionnaire-answers';
import type { CheckResult } from '../reviews/reviews.repository';

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
  const details = { check: 'questionnaire', missing, invalid };
  if (missing.length === 0 && invalid.length === 0) {
    return {
      decision: 'GREEN',
      rejectLabels: [],
      moderationComment: null,
      details,
      risk: 'low',
      historyEvent: 'step.checked',
    };
  }
  return {
    decision: 'RED',
    reviewRejectType: 'RETRY',
    rejectLabels: [
      ...(missing.length ? ['QUESTIONNAIRE_INCOMPLETE'] : []),
      ...(invalid.length ? ['INVALID_DATA'] : []),
    ],
    moderationComment: [
      missing.length ? `Unanswered: ${missing.join(', ')}` : '',
      invalid.length ? `Invalid: ${invalid.join(', ')}` : '',
    ]
      .filter(Boolean)
      .join('; '),
    details,
    risk: 'low',
    historyEvent: 'step.checked',
  };
}
