import { z } from 'zod';
import { resourceMetadataSchema } from './media';
import { UBO_ROLES } from './verification-ubos';

/**
 * Response bodies of the verification API (partner, hosted SDK and operator): what the OpenAPI document
 * (verification-api.openapi.ts) and the typed client are made from. Field lists follow the contract and
 * DECISIONS; objects the contract leaves open are documented as open objects.
 */

const ts = z.string().datetime({ offset: true });
const str = z.string();
const strOrNull = z.string().nullable();
const strings = z.array(z.string());
const open = z.record(z.string(), z.unknown());
const applicantType = z.enum(['individual', 'company']);
const reviewAnswer = z.enum(['GREEN', 'RED']);

/** `{message}`: every verification error. */
export const verificationError = z.object({ message: z.string() });

export const levelSummaryResponse = z.object({
  name: str,
  applicantType,
  isActive: z.boolean(),
  isDefault: z.boolean(),
  requiredSteps: strings.describe('Kinds of the steps that are not optional'),
});
export const levelListResponse = z.object({
  items: z.array(levelSummaryResponse),
  totalItems: z.number().int(),
});

export const levelDetailResponse = z.object({
  id: str,
  name: str,
  applicantType,
  isActive: z.boolean(),
  isDefault: z.boolean(),
  steps: z.array(z.object({ kind: str, optional: z.boolean(), config: open })),
  attachedQuestionnaireId: strOrNull,
  personalInfoFields: strings,
  personalInfoRequiredFields: strings,
  companyDataFields: strings,
  companyRequiredFields: strings,
  companyRequiredDocuments: strings,
  companyDocumentsMinRequired: z.number().int().nullable(),
  companyLegalForms: strings,
});

export const APPLICANT_STATUSES = [
  'init',
  'pending',
  'in_review',
  'awaiting_user',
  'approved',
  'rejected',
  'expired',
  'deactivated',
] as const;
export const RISK_LEVELS = ['unknown', 'low', 'medium', 'high'] as const;

export const applicantResponse = z.object({
  id: str,
  externalUserId: str,
  type: applicantType,
  verificationLevelName: strOrNull,
  status: z.enum(APPLICANT_STATUSES),
  riskLevel: z.enum(RISK_LEVELS),
  createdAtUtc: ts,
  updatedAtUtc: ts,
  lockedFields: strings.describe('Level keys the partner claimed: immutable from the SDK'),
  info: open.describe('The identity fields kept for the level'),
});

export const companyInfoResponse = z.object({
  externalUserId: str,
  companyName: strOrNull,
  registrationNumber: strOrNull,
  legalForm: strOrNull.describe('Lower case'),
  incorporationDate: strOrNull,
  registeredAddress: strOrNull,
  country: strOrNull,
  verificationLevelName: strOrNull,
  status: z.enum(APPLICANT_STATUSES),
  riskLevel: z.enum(RISK_LEVELS),
  createdAtUtc: ts,
  updatedAtUtc: ts,
});

const counts = z.object({
  total: z.number().int(),
  ubos: z.number().int(),
  directors: z.number().int(),
  shareholders: z.number().int(),
  representatives: z.number().int(),
  spawned: z.number().int(),
  completed: z.number().int(),
  rejected: z.number().int(),
  pending: z.number().int(),
});
export const companyStructureResponse = z.object({
  externalUserId: str,
  hasNoUbos: z.boolean(),
  hasNoShareholders: z.boolean(),
  hasNoDirectors: z.boolean(),
  hasNoRepresentatives: z.boolean(),
  counts,
  allChildrenComplete: z.boolean(),
  lastChildCompletedAtUtc: ts.nullable(),
});

export const sessionResponse = z.object({
  url: str.describe('{PUBLIC_BASE_URL}/sdk/{shortCode}: redirect the user here'),
  shortCode: str,
  expiresAtUtc: ts,
  enrollmentId: str,
  levelName: str,
});

export const statusResponse = z.object({
  externalUserId: str,
  applicantId: str,
  levelName: strOrNull,
  status: z.enum(APPLICANT_STATUSES),
  reviewAnswer: reviewAnswer.nullable(),
  reviewRejectType: strOrNull,
  rejectLabels: strings,
  moderationComment: strOrNull,
  riskLevel: z.enum(RISK_LEVELS),
  attempt: z.number().int(),
  createdAtUtc: ts,
  reviewedAtUtc: ts.nullable(),
});

export const STEP_REVIEW_STATUSES = [
  'pending',
  'submitted',
  'in_review',
  'completed',
  'awaitingOperatorReview',
  'expired',
] as const;

/** Step result: the vocabulary of the applicantReviewed event. */
export const stepResultResponse = z.object({
  kind: str,
  optional: z.boolean(),
  reviewAnswer: reviewAnswer.nullable(),
  reviewStatus: z.enum(STEP_REVIEW_STATUSES),
  reviewRejectType: z.enum(['FINAL', 'RETRY', 'EXPIRED']).nullable(),
  lastUpdatedAtUtc: ts,
});
export const stepsResponse = z.object({
  externalUserId: str,
  levelId: strOrNull,
  levelName: strOrNull,
  steps: z.array(stepResultResponse),
});

export const sandboxReviewResponse = statusResponse.extend({ steps: z.array(open) });

export const reviewHistoryResponse = z.object({
  items: z.array(z.object({ atUtc: ts, eventType: str, actorType: str })),
  totalItems: z.number().int(),
});

/** The resource metadata shape lives in media.ts (it is also what media-store answers). */
export const resourceMetadataResponse = resourceMetadataSchema;
export const resourceListResponse = z.object({
  items: z.array(resourceMetadataResponse),
  totalItems: z.number().int(),
});
export const uploadHistoryResponse = z.object({
  items: z.array(
    z.looseObject({
      resourceId: str.describe('Accepted by the bytes endpoint'),
      supersededAtUtc: ts.nullable(),
    }),
  ),
  totalItems: z.number().int(),
});

export const uboRowResponse = z.object({
  uboIndex: z.number().int(),
  fullName: str,
  dateOfBirth: strOrNull,
  ownershipPercent: z.number().nullable(),
  roles: z.array(z.enum(UBO_ROLES)),
  email: strOrNull,
  nationality: strOrNull,
  linkedApplicantId: strOrNull,
  source: str,
  verificationLinkUrl: strOrNull,
  verificationLinkExpiresAtUtc: ts.nullable(),
  identityChangedAfterSpawn: z.boolean(),
  removed: z.boolean(),
  createdAtUtc: ts,
  updatedAtUtc: ts,
});
export const uboListResponse = z.object({ items: z.array(uboRowResponse), totalItems: z.number().int() });

const sdkLink = z.object({
  url: str,
  shortCode: str,
  expiresAtUtc: ts,
  token: str.describe('A signed SDK token'),
});
export const spawnResultResponse = z.object({
  uboIndex: z.number().int(),
  childApplicantId: str,
  childExternalUserId: str,
  alreadyLinked: z.boolean(),
  sdkLink,
});
export const regenerateResultResponse = z.object({
  uboIndex: z.number().int(),
  childApplicantId: str,
  sdkLink,
});

// ---- hosted SDK API ----

export const sdkLinkResponse = z.object({
  token: str,
  expiresAtUtc: ts,
  enrollmentId: str,
  levelName: str,
  presentation: z.object({
    lang: str.optional(),
    theme: z.enum(['light', 'dark', 'system']).optional(),
    returnUrl: str.optional(),
    successUrl: str.optional(),
    errorUrl: str.optional(),
  }),
});

const fieldSet = z.object({ enabled: strings, required: strings, values: open, locked: strings });
const sdkStep = z.object({
  kind: str,
  optional: z.boolean(),
  reviewStatus: z.enum(STEP_REVIEW_STATUSES),
  reviewAnswer: reviewAnswer.nullable(),
});
/** An upload a step still open on the session already holds (decision 0447). */
const sdkStoredUpload = resourceMetadataSchema
  .pick({ slot: true, documentType: true, side: true, kind: true, mime: true })
  .extend({ addedAtUtc: ts });
const sdkSessionStep = sdkStep.extend({
  uploads: z
    .array(sdkStoredUpload)
    .describe(
      'The slots of this step that already hold an accepted upload, the latest of each (of a company document: the latest of each documentType). Empty unless the step is pending on an open verification, and for steps without uploads',
    ),
});
export const sdkSessionResponse = z.looseObject({
  applicantType,
  levelName: str,
  lang: strOrNull,
  theme: z.enum(['light', 'dark', 'system']),
  steps: z.array(sdkSessionStep),
  personalInfo: fieldSet,
  companyData: fieldSet
    .extend({
      legalForms: strings,
      requiredDocuments: strings,
      documentsMinRequired: z.number().int().nullable(),
    })
    .nullable(),
  questionnaire: open.nullable(),
  redirects: z.object({ successUrl: strOrNull, errorUrl: strOrNull, returnUrl: strOrNull }),
});
export const sdkPersonalInfoResponse = z.object({
  values: open.describe('The stored values after the call'),
  lockedFields: strings.describe('Names refused: locked, and the submitted value differed'),
});
export const sdkQuestionnaireResponse = z.object({ answers: open, missing: strings });
export const sdkStepSubmitResponse = z.object({
  kind: str,
  reviewStatus: z.literal('submitted'),
  steps: z.array(sdkStep.partial().passthrough()),
});
export const sdkSubmitResponse = z.object({
  enrollmentStatus: str,
  steps: z.array(sdkStep.partial().passthrough()),
});

// ---- operator API ----

export const productResponse = z.object({ id: str, name: str });
export const keyResponse = z.object({
  apiKey: str,
  apiSecret: str.describe('Shown only in this answer'),
  environment: z.enum(['production', 'sandbox']),
});
export const keyDeactivatedResponse = z.object({ apiKey: str, active: z.boolean() });
export const questionnaireResponse = open;
export const stepReviewResultResponse = z.object({
  step: z.looseObject({
    kind: str,
    optional: z.boolean(),
    reviewAnswer,
    reviewStatus: z.literal('completed'),
    reviewRejectType: z.enum(['FINAL', 'RETRY']).nullable(),
    rejectLabels: strings,
    moderationComment: strOrNull,
    clientComment: strOrNull,
    lastUpdatedAtUtc: ts,
  }),
  reviewCompleted: z.boolean(),
  applicant: statusResponse,
});
export const operatorStepsResponse = z.object({ applicant: statusResponse, steps: z.array(open) });
export const applicantActionResponse = z.object({ action: str, applicant: statusResponse });
