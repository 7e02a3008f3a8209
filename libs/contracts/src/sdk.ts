import { z } from 'zod';

/** Question types of an operator questionnaire (DECISIONS "Hosted SDK API"). */
export const QUESTION_TYPES = ['text', 'select', 'multiselect', 'boolean', 'date', 'number'] as const;
export type QuestionType = (typeof QUESTION_TYPES)[number];

const slug = z
  .string({ error: 'is required' })
  .regex(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/, 'must be 1–64 letters, digits, "_", "." or "-"');

export const questionSchema = z
  .object({
    id: slug,
    text: z.string({ error: 'is required' }).trim().min(1, 'is required').max(1000),
    type: z.enum(QUESTION_TYPES, { error: 'must be text, select, multiselect, boolean, date or number' }),
    required: z.boolean().default(false),
    options: z.array(z.string().trim().min(1).max(200)).min(1).max(100).optional(),
  })
  .strict()
  .superRefine((q, ctx) => {
    const choice = q.type === 'select' || q.type === 'multiselect';
    if (choice && !q.options) {
      ctx.addIssue({ code: 'custom', path: ['options'], message: `is required for a ${q.type} question` });
    }
    if (!choice && q.options) {
      ctx.addIssue({ code: 'custom', path: ['options'], message: 'applies only to select and multiselect' });
    }
    if (q.options && new Set(q.options).size !== q.options.length) {
      ctx.addIssue({ code: 'custom', path: ['options'], message: 'must not repeat a value' });
    }
  });
export type Question = z.infer<typeof questionSchema>;

/** Body of POST /admin/v1/products/{productId}/questionnaires. */
export const questionnaireCreateSchema = z
  .object({
    id: slug,
    title: z.string({ error: 'is required' }).trim().min(1, 'is required').max(200),
    questions: z.array(questionSchema).min(1, 'must hold at least one question').max(100),
  })
  .strict()
  .superRefine((q, ctx) => {
    const ids = q.questions.map((question) => question.id);
    if (new Set(ids).size !== ids.length) {
      ctx.addIssue({ code: 'custom', path: ['questions'], message: 'question ids must be unique' });
    }
  });
export type QuestionnaireCreateInput = z.infer<typeof questionnaireCreateSchema>;

/** Body of POST /api/v1/sdk/questionnaire. Values are checked against the question types by the service. */
export const questionnaireAnswersSchema = z
  .object({ answers: z.record(z.string().max(64), z.unknown(), { error: 'answers must be an object' }) })
  .strict();

/** Bounds of a personal-info body: far above any level's keys, so only a junk body meets them (400). */
export const SDK_PERSONAL_INFO_MAX_KEYS = 100;
export const SDK_PERSONAL_INFO_MAX_KEY_LENGTH = 64;

/** One value of a key the level enables: a string, or null / "" to clear an editable field. */
export const sdkPersonalInfoValueSchema = z.union(
  [z.string().max(500, 'must be at most 500 characters'), z.null()],
  { error: 'must be a string or null' },
);

/**
 * Body of POST /api/v1/sdk/personal-info: a flat object of level keys. Keys the level does not enable are
 * dropped whatever their value (DECISIONS "Hosted SDK API"), so the values are not checked here: the service
 * checks those of enabled keys with sdkPersonalInfoValueSchema. The key count and length are bounded.
 */
export const sdkPersonalInfoSchema = z
  .record(
    z.string(),
    z.unknown().meta({
      description:
        'For a key the level enables: a string (at most 500 characters), or null / "" to clear it. Other keys are dropped.',
    }),
    { error: 'body must be a JSON object of level keys' },
  )
  .superRefine((body, ctx) => {
    const keys = Object.keys(body);
    if (keys.length > SDK_PERSONAL_INFO_MAX_KEYS) {
      ctx.addIssue({ code: 'custom', message: `body must hold at most ${SDK_PERSONAL_INFO_MAX_KEYS} keys` });
    }
    if (keys.some((key) => key.length > SDK_PERSONAL_INFO_MAX_KEY_LENGTH)) {
      ctx.addIssue({
        code: 'custom',
        message: `body keys must be at most ${SDK_PERSONAL_INFO_MAX_KEY_LENGTH} characters`,
      });
    }
  })
  .meta({
    maxProperties: SDK_PERSONAL_INFO_MAX_KEYS,
    propertyNames: { type: 'string', maxLength: SDK_PERSONAL_INFO_MAX_KEY_LENGTH },
  });

/** Step kinds that take no input from the user: `POST /api/v1/sdk/submit` submits them itself. */
export const SDK_SERVER_STEP_KINDS = ['aml', 'adverse_media'] as const;

/** Document types the hosted page offers; the two-sided ones need a back side. */
export const DOCUMENT_TYPES = ['passport', 'id_card', 'driving_licence', 'residence_permit'] as const;
export const TWO_SIDED_DOCUMENT_TYPES: readonly string[] = [
  'id_card',
  'driving_licence',
  'driving_license',
  'drivers',
  'drivers_license',
  'residence_permit',
];

/** Whether a document type has a back side (case-insensitive; a passport and any other type are one-sided). */
export const isTwoSidedDocument = (documentType: string): boolean =>
  TWO_SIDED_DOCUMENT_TYPES.includes(documentType.toLowerCase());

/** Upload slots per media step kind (what `steps/{kind}/submit` checks before moving the step). */
export const STEP_MEDIA_SLOTS: Record<string, readonly string[]> = {
  identity_doc: ['document_front', 'document_back'],
  selfie: ['selfie'],
  liveness: ['liveness_video'],
  poa: ['additional'],
  company_docs: ['company_doc'],
  company_documents: ['company_doc'],
};

/**
 * The upload slots a level's steps use, in the order of its steps (decision 0483): `POST /api/v1/sdk/uploads/{slot}`
 * refuses any other slot, so nothing is stored that no step of the applicant's level reads.
 */
export function levelUploadSlots(steps: readonly { kind: string }[]): string[] {
  const slots = steps.flatMap((step) =>
    Object.hasOwn(STEP_MEDIA_SLOTS, step.kind) ? STEP_MEDIA_SLOTS[step.kind] : [],
  );
  return [...new Set(slots)];
}

export { SDK_ERROR_CODES, type SdkErrorCode } from './sdk-error-codes';
