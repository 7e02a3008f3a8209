import { countryCodeSchema } from './countries';
import { pastDateSchema } from './dates';
import { z } from 'zod';

/** Step kinds a level can list (contract "Step kinds" plus the configuration-only steps). */
export const VERIFICATION_STEP_KINDS = [
  'identity_doc',
  'selfie',
  'liveness',
  'poa',
  'questionnaire',
  'company_docs',
  'aml',
  'adverse_media',
  'personal_information',
  'company_data',
  'company_documents',
] as const;

export const LEVEL_NAME_PATTERN = /^[A-Z][A-Z0-9_]{1,40}$/;

/** SDK baselines used when a level leaves its field list empty. */
export const PERSONAL_INFO_BASELINE = [
  'firstName',
  'lastName',
  'dateOfBirth',
  'nationality',
  'email',
  'phone',
];
export const COMPANY_DATA_BASELINE = [
  'companyName',
  'registrationCountry',
  'registrationNumber',
  'legalAddress',
  'email',
  'phone',
];

/** Request name (POST /v1/applicants, PATCH company-info) -> level key. Other names are the same on both sides. */
export const COMPANY_FIELD_TO_LEVEL_KEY: Record<string, string> = {
  incorporationDate: 'incorporatedOn',
  registeredAddress: 'legalAddress',
  country: 'registrationCountry',
};

export const COMPANY_REQUEST_FIELDS = [
  'companyName',
  'registrationNumber',
  'legalForm',
  'incorporationDate',
  'registeredAddress',
  'country',
  'email',
  'phone',
] as const;

export const INDIVIDUAL_FIELDS = [
  'firstName',
  'lastName',
  'middleName',
  'dateOfBirth',
  'nationality',
  'country',
  'email',
  'phone',
  'address',
] as const;

/** Review events a partner may read through review-history; every other event is administrative. */
export const PARTNER_REVIEW_EVENTS = [
  'applicant.created',
  'applicant.updated',
  'applicant.reset',
  'applicant.blocklisted',
  'applicant.blocklist_removed',
  'applicant.sent_to_review',
  'applicant.email_status_sent',
  'applicant.monitoring_enabled',
  'applicant.monitoring_disabled',
  'applicant.verified',
  'applicant.approved',
  'applicant.rejected',
  'applicant.deactivated',
  'applicant.activated',
  'enrollment.created',
  'enrollment.submitted',
  'enrollment.completed',
  'enrollment.expired',
  'aml.run',
  'adverse_media.run',
  'managed_compliance.decided',
] as const;

/** Partner webhook event types of the verification API (outbox `event_type`, entityType `applicant`). */
export const VERIFICATION_EVENTS = {
  APPLICANT_CREATED: 'applicantCreated',
  APPLICANT_PENDING: 'applicantPending',
  APPLICANT_REVIEWED: 'applicantReviewed',
  APPLICANT_ON_HOLD: 'applicantOnHold',
  APPLICANT_RESET: 'applicantReset',
  APPLICANT_DEACTIVATED: 'applicantDeactivated',
  APPLICANT_ACTIVATED: 'applicantActivated',
  APPLICANT_PERSONAL_INFO_CHANGED: 'applicantPersonalInfoChanged',
  COMPANY_CHILDREN_COMPLETED: 'companyChildrenCompleted',
} as const;

const required = () => ({ error: 'is required' });
const isoDate = pastDateSchema;
const optionalText = z.string().trim().min(1).max(500).optional();

/**
 * An email address, wherever one is stored (applicant create and PATCH, UBO rows, the hosted page's form): trimmed,
 * then one address of at most 254 characters; otherwise 400 `email: must be an email address` (decision 0483's
 * wording). A malformed one claimed by the partner would be locked against the end user's correction.
 */
export const emailAddress = z
  .string()
  .trim()
  .pipe(
    // Local part (at most 64) @ dotted domain; any script, as a person's address may be internationalised
    // (`müller@bücher.de`), which zod's default, ASCII-only pattern would refuse on the hosted page.
    z.email({ pattern: /^[^\s@"]{1,64}@[^\s@".]+(\.[^\s@".]+)+$/u }).max(254),
  )
  .meta({
    format: 'email',
    maxLength: 254,
    description: 'One email address (an internationalised one too), trimmed; at most 254 characters',
  });

/** How deep a step's `config` may nest (objects and arrays): free-form, but stored and serialised. */
export const STEP_CONFIG_MAX_DEPTH = 16;

/**
 * Whether `value` nests at most `max` objects or arrays deep; iterative, so that a hostile depth (a body of
 * nested brackets well under the size limit) cannot overflow the stack here, in JSON.stringify or in Postgres.
 */
export function nestsAtMost(value: unknown, max: number): boolean {
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [current, depth] = stack.pop()!;
    if (current === null || typeof current !== 'object') continue;
    if (depth >= max) return false;
    for (const child of Object.values(current)) stack.push([child, depth + 1]);
  }
  return true;
}

export const levelStepSchema = z.object({
  kind: z.enum(VERIFICATION_STEP_KINDS),
  optional: z.boolean().default(false),
  config: z
    .record(z.string(), z.unknown())
    .refine((config) => nestsAtMost(config, STEP_CONFIG_MAX_DEPTH), {
      error: `must nest at most ${STEP_CONFIG_MAX_DEPTH} levels deep`,
    })
    .default({}),
});

const fieldList = z.array(z.string().min(1).max(64)).max(64);

const levelFields = {
  name: z.string(required()).regex(LEVEL_NAME_PATTERN, 'must match ^[A-Z][A-Z0-9_]{1,40}$'),
  applicantType: z.enum(['individual', 'company'], required()),
  isActive: z.boolean(),
  isDefault: z.boolean(),
  steps: z.array(levelStepSchema).max(32),
  attachedQuestionnaireId: z.string().min(1).max(200).nullable(),
  personalInfoFields: fieldList,
  personalInfoRequiredFields: fieldList,
  companyDataFields: fieldList,
  companyRequiredFields: fieldList,
  companyRequiredDocuments: fieldList,
  companyDocumentsMinRequired: z.number().int().min(0).max(100).nullable(),
  companyLegalForms: fieldList,
};

/** Body of POST /admin/v1/products/{productId}/levels. */
export const levelCreateSchema = z
  .object({
    ...levelFields,
    isActive: levelFields.isActive.default(true),
    isDefault: levelFields.isDefault.default(false),
    steps: levelFields.steps.default([]),
    attachedQuestionnaireId: levelFields.attachedQuestionnaireId.default(null),
    personalInfoFields: fieldList.default([]),
    personalInfoRequiredFields: fieldList.default([]),
    companyDataFields: fieldList.default([]),
    companyRequiredFields: fieldList.default([]),
    companyRequiredDocuments: fieldList.default([]),
    companyDocumentsMinRequired: levelFields.companyDocumentsMinRequired.default(null),
    companyLegalForms: fieldList.default([]),
  })
  .strict();
export type LevelCreateInput = z.infer<typeof levelCreateSchema>;

/** Body of PATCH /admin/v1/products/{productId}/levels/{levelName}: any subset of the create body. */
export const levelPatchSchema = z.object(levelFields).partial().strict();
export type LevelPatchInput = z.infer<typeof levelPatchSchema>;

/**
 * Body of POST /v1/applicants. Unknown fields are ignored (the level decides what is kept). An externalUserId
 * may hold any printable character: `/`, `?`, `#`, `%` and spaces are addressed percent-encoded in the path
 * (`a%2Fb`, as the client SDK's fillPath does). Control characters and the dot segments `.` and `..` (which URL
 * parsers resolve away before the request leaves the client) are refused (decision 0476), and so is whitespace
 * at either end: the id is never trimmed.
 */
export const applicantCreateSchema = z.object({
  externalUserId: z
    .string({ error: (issue) => (issue.input === undefined ? 'is required' : 'must be a string') })
    .refine((id) => id.trim() !== '', { error: 'is required', abort: true })
    // Kept exactly as sent, never trimmed: "alice " is not "alice", whose applicant a repeat create would answer
    // (decision 0476). Surrounding whitespace is refused rather than kept, as it is almost always a slip.
    .refine((id) => id === id.trim(), { error: 'must not start or end with whitespace', abort: true })
    .min(1, 'is required')
    .max(200, 'must be at most 200 characters')
    .refine((id) => !/\p{Cc}/u.test(id), 'must not contain control characters')
    .refine((id) => id !== '.' && id !== '..', {
      error: 'must not be "." or "..", which URL paths cannot address',
    }),
  type: z.enum(['individual', 'company']).default('individual'),
  verificationLevelName: z.string().min(1).max(64).optional(),
  companyName: optionalText,
  registrationNumber: optionalText,
  legalForm: optionalText,
  incorporationDate: isoDate.optional(),
  registeredAddress: optionalText,
  country: countryCodeSchema.optional(),
  email: emailAddress.optional(),
  phone: optionalText,
  firstName: optionalText,
  lastName: optionalText,
  middleName: optionalText,
  dateOfBirth: isoDate.optional(),
  nationality: countryCodeSchema.optional(),
  address: optionalText,
});
export type ApplicantCreateInput = z.infer<typeof applicantCreateSchema>;

/**
 * A field of a PATCH of identity fields: a value changes it and claims it for the partner (locked in the
 * SDK); `null` clears it and reopens the claim, so the end user fills it in on the hosted page (contract "Field
 * lock" 3, decision 0436).
 */
const patchText = z.string().trim().min(1).max(500).nullable().optional();
const patchEmail = emailAddress.nullable().optional();
const patchCountry = countryCodeSchema.nullable().optional();
const patchDate = isoDate.nullable().optional();

/** Body of PATCH /v1/applicants/{externalUserId}/company-info. */
export const companyInfoPatchSchema = z
  .object({
    companyName: patchText,
    registrationNumber: patchText,
    legalForm: patchText,
    incorporationDate: patchDate,
    registeredAddress: patchText,
    country: patchCountry,
    email: patchEmail,
    phone: patchText,
  })
  .strict();
export type CompanyInfoPatchInput = z.infer<typeof companyInfoPatchSchema>;

/** Body of PATCH /v1/applicants/{externalUserId}/personal-info (an individual's identity fields). */
export const personalInfoPatchSchema = z
  .object({
    firstName: patchText,
    lastName: patchText,
    middleName: patchText,
    dateOfBirth: patchDate,
    nationality: patchCountry,
    country: patchCountry,
    email: patchEmail,
    phone: patchText,
    address: patchText,
  })
  .strict();
export type PersonalInfoPatchInput = z.infer<typeof personalInfoPatchSchema>;

/** Step states an operator decision applies to (docs/decisions/0103). */
export const OPERATOR_DECIDABLE_STEP_STATUSES = ['awaitingOperatorReview', 'in_review'] as const;

const reviewComment = z.string().trim().min(1, 'must not be empty').max(2000);

/**
 * Body of POST /admin/v1/products/{productId}/applicants/{externalUserId}/steps/{kind}/review: the operator's
 * decision on one step. RED needs a reviewRejectType; reviewRejectType and rejectLabels go with RED only.
 */
export const stepReviewSchema = z
  .object({
    reviewAnswer: z.enum(['GREEN', 'RED'], { error: 'must be GREEN or RED' }),
    reviewRejectType: z.enum(['RETRY', 'FINAL'], { error: 'must be RETRY or FINAL' }).optional(),
    rejectLabels: z
      .array(z.string().trim().min(1, 'must not be empty').max(100), { error: 'must be an array of strings' })
      .max(50)
      .optional(),
    moderationComment: reviewComment.optional(),
    clientComment: reviewComment.optional(),
  })
  .strict()
  .superRefine((value, ctx) => {
    if (value.reviewAnswer === 'RED' && !value.reviewRejectType) {
      ctx.addIssue({
        code: 'custom',
        path: ['reviewRejectType'],
        message: 'is required when reviewAnswer is RED',
      });
    }
    if (value.reviewAnswer === 'GREEN' && value.reviewRejectType) {
      ctx.addIssue({
        code: 'custom',
        path: ['reviewRejectType'],
        message: 'applies only when reviewAnswer is RED',
      });
    }
    if (value.reviewAnswer === 'GREEN' && value.rejectLabels && value.rejectLabels.length > 0) {
      ctx.addIssue({
        code: 'custom',
        path: ['rejectLabels'],
        message: 'applies only when reviewAnswer is RED',
      });
    }
  });
export type StepReviewInput = z.infer<typeof stepReviewSchema>;

/**
 * Body of POST /v1/applicants/{externalUserId}/sandbox/review (sandbox credentials only, DECISIONS "Sandbox"):
 * the verdict to simulate, and optionally an answer per step kind (the other required steps take
 * reviewAnswer). A RED without reviewRejectType is RETRY.
 */
export const sandboxReviewSchema = z
  .object({
    reviewAnswer: z.enum(['GREEN', 'RED'], { error: 'must be GREEN or RED' }),
    reviewRejectType: z.enum(['RETRY', 'FINAL'], { error: 'must be RETRY or FINAL' }).optional(),
    rejectLabels: z
      .array(z.string().trim().min(1, 'must not be empty').max(100), { error: 'must be an array of strings' })
      .max(50)
      .optional(),
    moderationComment: reviewComment.optional(),
    steps: z
      .record(z.string(), z.enum(['GREEN', 'RED'], { error: 'must be GREEN or RED' }), {
        error: 'must be an object of step kind to GREEN or RED',
      })
      .optional(),
  })
  .strict()
  .superRefine((value, ctx) => {
    if (value.reviewAnswer === 'GREEN' && (value.reviewRejectType || value.rejectLabels?.length)) {
      ctx.addIssue({
        code: 'custom',
        path: [value.reviewRejectType ? 'reviewRejectType' : 'rejectLabels'],
        message: 'applies only when reviewAnswer is RED',
      });
    }
    const answers = Object.values(value.steps ?? {});
    if (value.reviewAnswer === 'GREEN' && answers.includes('RED')) {
      ctx.addIssue({ code: 'custom', path: ['steps'], message: 'a RED step makes the review RED' });
    }
  });
export type SandboxReviewInput = z.infer<typeof sandboxReviewSchema>;

const booleanQuery = z
  .enum(['true', 'false'], { error: 'must be true or false' })
  .transform((v) => v === 'true');

export const levelListQuerySchema = z.object({
  type: z
    .enum(['individual', 'company', 'all'], { error: 'must be individual, company or all' })
    .default('all'),
  includeInactive: booleanQuery.default(false),
});

/**
 * `since` as the contract names it, "ISO 8601": a date-time with an offset (`2026-01-01T10:00:00+02:00`, `…Z`), or
 * without one, or a date alone (`2026-01-01`, its midnight); a moment without an offset is UTC (decision 0474).
 * Answers the moment as an ISO string in UTC.
 */
const isoMoment = z
  .union([z.iso.datetime({ offset: true }), z.iso.datetime({ local: true }), z.iso.date()], {
    error: 'must be an ISO 8601 date or timestamp',
  })
  .transform((v) => new Date(/T/.test(v) && !/(Z|[+-]\d\d:?\d\d)$/i.test(v) ? `${v}Z` : v).toISOString());

export const reviewHistoryQuerySchema = z.object({
  since: isoMoment
    .optional()
    .describe(
      'ISO 8601: only events from that moment; a date alone is its midnight, a time without an offset is UTC',
    ),
  limit: z.coerce
    .number({ error: 'must be an integer from 1 to 200' })
    .int('must be an integer from 1 to 200')
    .min(1, 'must be an integer from 1 to 200')
    .max(200, 'must be an integer from 1 to 200')
    .default(50),
  eventType: z.enum(PARTNER_REVIEW_EVENTS, { error: 'is not a partner-visible event' }).optional(),
});

export const SESSION_TTL_DAYS = { default: 7, min: 1, max: 90 } as const;

const TTL_DAYS_MESSAGE = 'must be an integer from 1 to 90';

/** `ttlDays` in a query string (verification-sessions, verifications): the text of an integer from 1 to 90. */
export const ttlDaysSchema = z.coerce
  .number({ error: TTL_DAYS_MESSAGE })
  .int(TTL_DAYS_MESSAGE)
  .min(SESSION_TTL_DAYS.min, TTL_DAYS_MESSAGE)
  .max(SESSION_TTL_DAYS.max, TTL_DAYS_MESSAGE)
  .default(SESSION_TTL_DAYS.default);

/**
 * `ttlDays` in a JSON body (spawn-kyc, regenerate-link): a JSON integer from 1 to 90, as the contract types it.
 * No coercion: `true`, `[5]` or `"7"` are refused, not read as 1, 5 or 7 days (decision 0474).
 */
export const ttlDaysBodySchema = z
  .number({ error: TTL_DAYS_MESSAGE })
  .int(TTL_DAYS_MESSAGE)
  .min(SESSION_TTL_DAYS.min, TTL_DAYS_MESSAGE)
  .max(SESSION_TTL_DAYS.max, TTL_DAYS_MESSAGE)
  .default(SESSION_TTL_DAYS.default);

export interface PresentationParams {
  lang?: string;
  theme?: 'light' | 'dark' | 'system';
  returnUrl?: string;
  successUrl?: string;
  errorUrl?: string;
}

const LANG = /^[a-z]{2,3}(-[A-Za-z0-9]{2,8})?$/;

/** An absolute http(s) URL, or undefined: the one parser every redirect field goes through. */
export function parseRedirectUrl(value: unknown): string | undefined {
  if (typeof value !== 'string' || value.length === 0 || value.length > 2048) return undefined;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return undefined;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined;
  if (!url.hostname) return undefined;
  return url.toString();
}

/**
 * The shared presentation-parameter parser (query of verification-sessions / verifications, body of
 * spawn-kyc / regenerate-link). Invalid values are dropped silently, never refused.
 */
export function parsePresentation(input: Record<string, unknown>): PresentationParams {
  const out: PresentationParams = {};
  const lang = typeof input.lang === 'string' ? input.lang.trim() : '';
  if (LANG.test(lang)) out.lang = lang;
  if (input.theme === 'light' || input.theme === 'dark' || input.theme === 'system') out.theme = input.theme;
  for (const key of ['returnUrl', 'successUrl', 'errorUrl'] as const) {
    const url = parseRedirectUrl(input[key]);
    if (url) out[key] = url;
  }
  return out;
}

/** Query of POST .../verification-sessions and .../verifications beyond the presentation parameters. */
export const sessionQuerySchema = z.object({ ttlDays: ttlDaysSchema });

/** Body of POST /admin/v1/products. */
export const productCreateSchema = z.object({
  name: z.string({ error: 'name is required' }).trim().min(1).max(200),
});

/** Body of POST /admin/v1/products/{productId}/keys. */
export const keyCreateSchema = z.object({
  environment: z.enum(['production', 'sandbox'], { error: 'environment must be production or sandbox' }),
});

/** Operator actions on an applicant (docs/decisions/0132). */
export const APPLICANT_ACTIONS = ['reset', 'deactivate', 'activate', 'blocklist', 'unblock'] as const;
export type ApplicantAction = (typeof APPLICANT_ACTIONS)[number];

/** Body of POST /admin/v1/products/{productId}/applicants/{externalUserId}/{action}. */
export const applicantActionSchema = z
  .object({ reason: z.string().trim().min(1).max(2000).optional() })
  .strict();

/**
 * The presentation parameters as the document shows them. `parsePresentation` reads them and drops an invalid
 * value silently instead of refusing the request, so every field is a plain optional string here.
 */
export const presentationParamsSchema = z.object({
  lang: z.string().optional().describe('ISO-639 code pinning the SDK language; an invalid value is dropped'),
  theme: z
    .enum(['light', 'dark', 'system'])
    .optional()
    .describe('Pins the theme (default system); another value is dropped'),
  returnUrl: z
    .string()
    .optional()
    .describe('Absolute http(s) URL: redirect on either outcome; anything else is dropped silently'),
  successUrl: z
    .string()
    .optional()
    .describe('Absolute http(s) URL: redirect on terminal success; takes precedence over returnUrl'),
  errorUrl: z
    .string()
    .optional()
    .describe(
      'Absolute http(s) URL: redirect on terminal error or final reject; takes precedence over returnUrl',
    ),
});
