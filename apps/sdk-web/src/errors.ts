import { ApiError, type Question, SDK_ERROR_CODES } from './api';
import { readable } from './forms';
import { fieldLabel, hasMessage, type MessageKey, type Translate } from './i18n';

/** An error on a step screen, with the field it is about (marked aria-invalid and focused) when it names one. */
export interface ScreenError {
  message: string;
  /** A level key (personal information, company data) or a question id. */
  field?: string;
}

/** Partner-claimed values the user tried to change (personal-info's `lockedFields`). */
export class LockedFieldsError extends Error {
  constructor(readonly fields: string[]) {
    super('locked');
  }
}

/** The server's reasons for refusing a value (`{key}: {reason}` 400s), most specific first. */
const REASONS: [RegExp, MessageKey][] = [
  [/not in the future/, 'reasonPastDate'],
  [/date/, 'reasonDate'],
  [/country/, 'reasonCountry'],
  [/email/, 'reasonEmail'],
  [/at most \d+ characters/, 'reasonTooLong'],
];

const UPLOAD_ITEMS: Record<string, MessageKey> = {
  document_front: 'side_front',
  'document_front.documentType': 'documentType',
  document_back: 'side_back',
  selfie: 'step_selfie',
  liveness_video: 'step_liveness',
  additional: 'step_poa',
  company_doc: 'companyDocType',
};

/** What the user calls an item the server names: a question's text, an upload, or a field's label. */
export function itemLabel(t: Translate, item: string, questions: Question[] = []): string {
  const question = questions.find((q) => q.id === item);
  if (question) return question.text;
  if (item in UPLOAD_ITEMS) return t(UPLOAD_ITEMS[item]);
  if (item.startsWith('company_doc:')) return readable(item.slice('company_doc:'.length));
  return fieldLabel(t, item);
}

/**
 * A failed save or step submit as the user should read it, in the page's language: a `{key}: {reason}` 400
 * names the field by its label (and marks it), the known 409s are translated, anything else is generic. The
 * server's English text and API names never reach the screen. (A 401 is not an error here: the caller ends
 * the session.)
 */
export function screenError(t: Translate, error: unknown, questions: Question[] = []): ScreenError {
  const label = (item: string) => itemLabel(t, item, questions);
  if (error instanceof LockedFieldsError) {
    return { message: t('errorLocked', { fields: error.fields.map(label).join(', ') }) };
  }
  if (!(error instanceof ApiError)) return { message: t('errorGeneric') };
  if (error.status === 0) return { message: t('errorNetwork') };
  if (error.status === 400) {
    const named = /^(?:answers\.)?([A-Za-z0-9_.-]+?): (.+)$/.exec(error.message);
    if (!named) return { message: t('errorGeneric') };
    const [, field, reason] = named;
    const why = REASONS.find(([pattern]) => pattern.test(reason))?.[1] ?? 'reasonInvalid';
    return { message: t('fieldInvalid', { field: label(field), reason: t(why) }), field };
  }
  if (error.status === 409) {
    if (error.is(SDK_ERROR_CODES.verificationSubmitted)) return { message: t('errorAlreadySubmitted') };
    const missing = /^\w+ is incomplete: (.+) is missing$/.exec(error.message);
    if (missing) return { message: t('missingItem', { item: label(missing[1]) }), field: missing[1] };
    const step = /^Step (\w+) is not submitted yet$/.exec(error.message);
    if (step) {
      const name = `step_${step[1]}`;
      return { message: t('errorStepMissing', { step: hasMessage(name) ? t(name) : readable(step[1]) }) };
    }
    if (/ is already /.test(error.message)) return { message: t('errorStepSent') };
  }
  return { message: t('errorGeneric') };
}
