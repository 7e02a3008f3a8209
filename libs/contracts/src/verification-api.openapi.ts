import { z } from 'zod';
import { MEDIA_SLOTS, MEDIA_SOURCES, resourceListQuerySchema } from './media';
import {
  named,
  okResponse as ok,
  OpenApiBuilder,
  type ResponseSpec,
  type RouteSpec,
} from './openapi-builder';
import { registerWebhookEvents, registerWebhookRoutes } from './openapi-webhooks';
import {
  questionnaireAnswersSchema,
  questionnaireCreateSchema,
  SDK_ERROR_CODES,
  sdkPersonalInfoSchema,
} from './sdk';
import {
  APPLICANT_ACTIONS,
  applicantActionSchema,
  applicantCreateSchema,
  companyInfoPatchSchema,
  personalInfoPatchSchema,
  keyCreateSchema,
  levelCreateSchema,
  levelListQuerySchema,
  levelPatchSchema,
  presentationParamsSchema,
  productCreateSchema,
  reviewHistoryQuerySchema,
  sandboxReviewSchema,
  sessionQuerySchema,
  stepReviewSchema,
  VERIFICATION_STEP_KINDS,
} from './verification';
import * as r from './verification-responses';
import { declarationsSchema, linkRequestSchema, uboCreateSchema, uboPatchSchema } from './verification-ubos';

/**
 * The OpenAPI 3.1 document of the verification API (docs/openapi/verification-api.json): the partner API
 * (/v1), the hosted SDK API (/api/v1/sdk, bearer SDK token) and, under the `operator` tag, the operator API
 * (/admin/v1, bearer ADMIN_TOKEN).
 */

const error = named('Error', r.verificationError);
const fail = (description: string, headers?: ResponseSpec['headers']): ResponseSpec => ({
  description,
  body: error,
  ...(headers ? { headers } : {}),
});

const RESPONSES: Record<string, ResponseSpec> = {
  BadRequest: fail('Malformed request or a missing or invalid field (the first problem found)'),
  Unauthorized: fail('Missing credentials, or no matching active key (a deactivated key included)'),
  Forbidden: fail('Valid credentials, but the resource belongs to another product'),
  NotFound: fail('Does not exist for this product (another tenant looks the same)'),
  Conflict: fail('The state does not allow the call; the message says why'),
  SdkConflict: fail('The state does not allow the call; the message says why', {
    'X-Error-Code': {
      description:
        'Set on the refusals a client tells apart: `verification_submitted` (the verification was submitted or closed first), `upload_limit` (the slot holds its quota of uploads)',
      schema: { type: 'string', enum: [SDK_ERROR_CODES.verificationSubmitted, SDK_ERROR_CODES.uploadLimit] },
      required: false,
    },
  }),
  SdkUploadUnavailable: fail(
    'Transient infrastructure error: back off about 1, 2, 4, 8 s, capped near 30 s; or, with `X-Error-Code: upload_expired`, the upload expired before it was recorded: nothing is stored, send the same file again now',
    {
      'X-Error-Code': {
        description:
          '`upload_expired`: the stored bytes expired before the upload was recorded (MEDIA_STAGED_TTL_SECONDS); absent on any other 503',
        schema: { type: 'string', enum: [SDK_ERROR_CODES.uploadExpired] },
        required: false,
      },
      'Retry-After': {
        description:
          'With `upload_expired`: `0`, the file can be sent again at once; on any other 503 `1`, the first step of the back-off',
        schema: { type: 'integer', minimum: 0 },
        required: true,
      },
    },
  ),
  Gone: fail('The link expired'),
  RequestTimeout: fail('The upload stalled: no bytes came for the idle timeout; nothing is stored'),
  PayloadTooLarge: fail('The file exceeds the size limit of its kind or the upload cap; nothing is stored'),
  UnsupportedMediaType: fail('The magic bytes are not a type allowed for the slot; nothing is stored'),
  Unprocessable: fail('Syntactically valid but semantically refused (for example no eligible level)'),
  TooManyRequests: fail('Rate limit exceeded: wait Retry-After seconds', {
    'Retry-After': {
      description: 'Seconds to wait',
      schema: { type: 'integer', minimum: 0 },
      required: true,
    },
  }),
  ServerError: fail('Unexpected server error; idempotent requests may be retried after a pause'),
  BadGateway: fail('Transient infrastructure error: back off about 1, 2, 4, 8 s, capped near 30 s'),
  ServiceUnavailable: fail('Transient infrastructure error: back off about 1, 2, 4, 8 s, capped near 30 s', {
    'Retry-After': {
      description: 'Seconds before the first retry (`1`); back off from there',
      schema: { type: 'integer', minimum: 0 },
      required: true,
    },
  }),
  GatewayTimeout: fail('Transient infrastructure error: back off about 1, 2, 4, 8 s, capped near 30 s'),
};

/** What every authenticated call can answer besides its own codes. */
const COMMON = {
  401: 'Unauthorized',
  429: 'TooManyRequests',
  500: 'ServerError',
  502: 'BadGateway',
  503: 'ServiceUnavailable',
  504: 'GatewayTimeout',
};
/** Calls on one applicant: also 403 (another product) and 404. */
const APPLICANT = { ...COMMON, 403: 'Forbidden', 404: 'NotFound' };

type Route = Omit<RouteSpec, 'security'>;
const partner = (route: Route): RouteSpec => ({ ...route, security: ['partner'] });
const sdk = (route: Omit<Route, 'tags'>): RouteSpec => ({ ...route, tags: ['sdk'], security: ['sdk'] });
const operator = (route: Omit<Route, 'tags'>): RouteSpec => ({
  ...route,
  tags: ['operator'],
  security: ['operator'],
});

const applicantPath = z.object({ externalUserId: z.string().describe('The partner-chosen applicant id') });
const uboPath = applicantPath.extend({
  uboIndex: z
    .number()
    .int()
    .min(0)
    .describe("Zero-based position in the company's ubos[]; never reused (a removed row keeps its index)"),
});
const productPath = z.object({ productId: z.string().uuid() });
const resourcePath = applicantPath.extend({
  resourceId: z.string().describe('{enrollmentIdHex32}.{slotCode}.{hmac16}'),
});
const ifNoneMatchHeader = z
  .string()
  .optional()
  .describe('ETags the client holds (comma-separated, weak or strong) or *: 304 when one is the upload’s');
const notModified = {
  description: 'Not modified: ETag, Last-Modified and Cache-Control, no body (decision 0487)',
};
const sessionQuery = z.object({
  verificationLevelName: z.string().describe('The level to verify against'),
  ...presentationParamsSchema.shape,
  ...sessionQuerySchema.shape,
});
const currentLevelSessionQuery = z.object({ ...presentationParamsSchema.shape, ...sessionQuerySchema.shape });

export const VERIFICATION_ROUTES: RouteSpec[] = [
  partner({
    method: 'get',
    path: '/v1/levels',
    operationId: 'listLevels',
    summary: "The product's levels (active ones unless includeInactive)",
    tags: ['levels'],
    params: { query: levelListQuerySchema },
    responses: { 200: ok('Levels', 'LevelList', r.levelListResponse), 400: 'BadRequest', ...COMMON },
  }),
  partner({
    method: 'get',
    path: '/v1/levels/{levelName}',
    operationId: 'getLevel',
    summary: 'One level',
    tags: ['levels'],
    params: { path: z.object({ levelName: z.string() }) },
    responses: { 200: ok('Level detail', 'LevelDetail', r.levelDetailResponse), 404: 'NotFound', ...COMMON },
  }),
  partner({
    method: 'post',
    path: '/v1/applicants',
    operationId: 'createApplicant',
    summary: 'Create an applicant (idempotent on externalUserId)',
    description:
      'Fields the resolved level does not enable are dropped silently. Every identity field sent is a partner claim, locked in the SDK.',
    tags: ['applicants'],
    body: { schema: named('ApplicantCreate', applicantCreateSchema) },
    responses: {
      201: ok('Created', 'Applicant', r.applicantResponse),
      200: ok('Already existed: the existing applicant', 'Applicant', r.applicantResponse),
      400: 'BadRequest',
      404: 'NotFound',
      422: 'Unprocessable',
      ...COMMON,
    },
  }),
  partner({
    method: 'get',
    path: '/v1/applicants/{externalUserId}',
    operationId: 'getApplicant',
    summary: 'One applicant',
    tags: ['applicants'],
    params: { path: applicantPath },
    responses: { 200: ok('The applicant', 'Applicant', r.applicantResponse), ...APPLICANT },
  }),
  partner({
    method: 'patch',
    path: '/v1/applicants/{externalUserId}/personal-info',
    operationId: 'patchPersonalInfo',
    summary: "Change an individual's identity fields (only the fields to change)",
    description:
      'A value changes the field and claims it for the partner (locked in the SDK); null clears it and reopens the claim, so the end user fills it in on the hosted page. Fields the level does not enable are dropped, as on create. 400 for a company applicant (use company-info).',
    tags: ['applicants'],
    params: { path: applicantPath },
    body: { schema: named('PersonalInfoPatch', personalInfoPatchSchema) },
    responses: {
      200: ok('The applicant after the change', 'Applicant', r.applicantResponse),
      400: 'BadRequest',
      ...APPLICANT,
    },
  }),
  partner({
    method: 'get',
    path: '/v1/applicants/{externalUserId}/company-info',
    operationId: 'getCompanyInfo',
    summary: 'Company identity of a company applicant',
    description: '400 for an individual applicant.',
    tags: ['company'],
    params: { path: applicantPath },
    responses: {
      200: ok('Company info', 'CompanyInfo', r.companyInfoResponse),
      400: 'BadRequest',
      ...APPLICANT,
    },
  }),
  partner({
    method: 'patch',
    path: '/v1/applicants/{externalUserId}/company-info',
    operationId: 'patchCompanyInfo',
    summary: 'Change company identity fields (only the fields to change)',
    description:
      'A value changes the field and claims it for the partner (locked in the SDK); null clears it and reopens the claim, so the end user fills it in. A country change gives 409 while a verification is in flight: reset the applicant first.',
    tags: ['company'],
    params: { path: applicantPath },
    body: { schema: named('CompanyInfoPatch', companyInfoPatchSchema) },
    responses: {
      200: ok('Company info after the change', 'CompanyInfo', r.companyInfoResponse),
      400: 'BadRequest',
      409: 'Conflict',
      ...APPLICANT,
    },
  }),
  partner({
    method: 'get',
    path: '/v1/applicants/{externalUserId}/company-structure',
    operationId: 'getCompanyStructure',
    summary: 'UBO counts and negative declarations',
    tags: ['company'],
    params: { path: applicantPath },
    responses: {
      200: ok('Company structure', 'CompanyStructure', r.companyStructureResponse),
      400: 'BadRequest',
      ...APPLICANT,
    },
  }),
  partner({
    method: 'patch',
    path: '/v1/applicants/{externalUserId}/company-structure',
    operationId: 'patchCompanyStructure',
    summary: 'Set the negative-declaration flags',
    description:
      'Only the flags to change. A name other than the four flags is 400 (`Unrecognized key: "…"`), as on company-info: a misspelt flag is never taken as a change.',
    tags: ['company'],
    params: { path: applicantPath },
    body: { schema: named('CompanyDeclarations', declarationsSchema) },
    responses: {
      200: ok('Company structure after the change', 'CompanyStructure', r.companyStructureResponse),
      400: 'BadRequest',
      ...APPLICANT,
    },
  }),
  partner({
    method: 'get',
    path: '/v1/applicants/{externalUserId}/ubos',
    operationId: 'listUbos',
    summary: 'Every UBO row, removed ones included, in index order',
    tags: ['company'],
    params: { path: applicantPath },
    responses: { 200: ok('UBO rows', 'UboList', r.uboListResponse), 400: 'BadRequest', ...APPLICANT },
  }),
  partner({
    method: 'post',
    path: '/v1/applicants/{externalUserId}/ubos',
    operationId: 'createUbo',
    summary: 'Append a UBO row',
    tags: ['company'],
    params: { path: applicantPath },
    body: { schema: named('UboCreate', uboCreateSchema) },
    responses: {
      201: ok('The row with its uboIndex', 'UboRow', r.uboRowResponse),
      400: 'BadRequest',
      ...APPLICANT,
    },
  }),
  partner({
    method: 'get',
    path: '/v1/applicants/{externalUserId}/ubos/{uboIndex}',
    operationId: 'getUbo',
    summary: 'One UBO row',
    tags: ['company'],
    params: { path: uboPath },
    responses: { 200: ok('The row', 'UboRow', r.uboRowResponse), 400: 'BadRequest', ...APPLICANT },
  }),
  partner({
    method: 'patch',
    path: '/v1/applicants/{externalUserId}/ubos/{uboIndex}',
    operationId: 'patchUbo',
    summary: 'Edit a UBO row',
    description:
      'Locked fields (linkedApplicantId, source, verificationLinkUrl, verificationLinkExpiresAtUtc) and the rest of the row as read (uboIndex, identityChangedAfterSpawn, removed, createdAtUtc, updatedAtUtc) are ignored silently, so a row read and sent back whole is an edit; any other key answers 400 `Unrecognized key: "…"`. identityChangedAfterSpawn becomes true after a fullName or dateOfBirth edit of a spawned row.',
    tags: ['company'],
    params: { path: uboPath },
    body: { schema: named('UboPatch', uboPatchSchema.loose()) },
    responses: {
      200: ok('The row after the edit', 'UboRow', r.uboRowResponse),
      400: 'BadRequest',
      409: 'Conflict',
      ...APPLICANT,
    },
  }),
  partner({
    method: 'delete',
    path: '/v1/applicants/{externalUserId}/ubos/{uboIndex}',
    operationId: 'removeUbo',
    summary: 'Mark a UBO row removed (its index is never reused)',
    tags: ['company'],
    params: { path: uboPath },
    responses: { 200: ok('The row, removed', 'UboRow', r.uboRowResponse), 400: 'BadRequest', ...APPLICANT },
  }),
  partner({
    method: 'post',
    path: '/v1/applicants/{externalUserId}/ubos/{uboIndex}/spawn-kyc',
    operationId: 'spawnUboKyc',
    summary: 'Create the child applicant of a UBO row and mint its link',
    description:
      "Idempotent on the row's child: a repeat answers 200 with alreadyLinked true, the same child and a fresh link. The child's level is levelName or the product's default individual level (422 without one). Capped per credential per hour (429 with Retry-After).",
    tags: ['company'],
    params: { path: uboPath },
    body: { schema: named('LinkRequest', linkRequestSchema), required: false },
    responses: {
      201: ok('Child created and link minted', 'SpawnResult', r.spawnResultResponse),
      200: ok('Already linked: the same child, a fresh link', 'SpawnResult', r.spawnResultResponse),
      400: 'BadRequest',
      409: 'Conflict',
      422: 'Unprocessable',
      ...APPLICANT,
    },
  }),
  partner({
    method: 'post',
    path: '/v1/applicants/{externalUserId}/ubos/{uboIndex}/regenerate-link',
    operationId: 'regenerateUboLink',
    summary: "Mint a fresh link for a UBO row's child",
    description:
      "Clears the child's rejected (RETRY) or expired state. 409 when the row has no child yet. Capped per row per 24 hours (429 with Retry-After).",
    tags: ['company'],
    params: { path: uboPath },
    body: { schema: named('LinkRequest', linkRequestSchema), required: false },
    responses: {
      200: ok('A fresh link', 'RegenerateResult', r.regenerateResultResponse),
      400: 'BadRequest',
      409: 'Conflict',
      422: 'Unprocessable',
      ...APPLICANT,
    },
  }),
  partner({
    method: 'post',
    path: '/v1/applicants/{externalUserId}/verification-sessions',
    operationId: 'createVerificationSession',
    summary: 'Mint a session link for a level',
    tags: ['sessions'],
    params: { path: applicantPath, query: sessionQuery },
    responses: {
      202: ok('The session link: redirect the user to url', 'Session', r.sessionResponse),
      400: 'BadRequest',
      422: 'Unprocessable',
      ...APPLICANT,
    },
  }),
  partner({
    method: 'post',
    path: '/v1/applicants/{externalUserId}/verifications',
    operationId: 'createVerification',
    summary: "Mint a session link for the applicant's current level",
    description: 'Answers 422 when the applicant has no level, or when its level is inactive.',
    tags: ['sessions'],
    params: { path: applicantPath, query: currentLevelSessionQuery },
    responses: {
      202: ok('The session link', 'Session', r.sessionResponse),
      400: 'BadRequest',
      422: 'Unprocessable',
      ...APPLICANT,
    },
  }),
  partner({
    method: 'get',
    path: '/v1/applicants/{externalUserId}/status',
    operationId: 'getApplicantStatus',
    summary: 'The verdict',
    tags: ['status'],
    params: { path: applicantPath },
    responses: { 200: ok('Status', 'ApplicantStatus', r.statusResponse), ...APPLICANT },
  }),
  partner({
    method: 'get',
    path: '/v1/applicants/{externalUserId}/steps',
    operationId: 'getApplicantSteps',
    summary: "One entry per step the applicant's level requires",
    tags: ['status'],
    params: { path: applicantPath },
    responses: { 200: ok('Step results', 'StepResults', r.stepsResponse), ...APPLICANT },
  }),
  partner({
    method: 'get',
    path: '/v1/applicants/{externalUserId}/review-history',
    operationId: 'getReviewHistory',
    summary: 'Partner-visible review events',
    description: 'An eventType outside the partner-visible list gives 400.',
    tags: ['status'],
    params: { path: applicantPath, query: reviewHistoryQuerySchema },
    responses: {
      200: ok('Review history', 'ReviewHistory', r.reviewHistoryResponse),
      400: 'BadRequest',
      ...APPLICANT,
    },
  }),
  partner({
    method: 'post',
    path: '/v1/applicants/{externalUserId}/sandbox/review',
    operationId: 'sandboxReview',
    summary: 'Sandbox credentials only: complete the review with a chosen outcome',
    description:
      'Completes the review exactly as production would (status, steps, history, applicantReviewed webhook, parent roll-up). Production credentials get 404; an applicant created with production credentials answers 422 and is left as it was.',
    tags: ['status'],
    params: { path: applicantPath },
    body: { schema: named('SandboxReview', sandboxReviewSchema) },
    responses: {
      200: ok('The status after the review, with the steps', 'SandboxReviewResult', r.sandboxReviewResponse),
      400: 'BadRequest',
      409: 'Conflict',
      422: 'Unprocessable',
      ...APPLICANT,
    },
  }),
  partner({
    method: 'get',
    path: '/v1/applicants/{externalUserId}/resources',
    operationId: 'listResources',
    summary: "The applicant's uploads, newest first",
    tags: ['resources'],
    params: { path: applicantPath, query: resourceListQuerySchema },
    responses: {
      200: ok('Resource metadata', 'ResourceList', r.resourceListResponse),
      400: 'BadRequest',
      ...APPLICANT,
    },
  }),
  partner({
    method: 'get',
    path: '/v1/applicants/{externalUserId}/resources/{resourceId}',
    operationId: 'getResourceBytes',
    summary: 'The raw bytes of an active or historical upload',
    description:
      'Streamed. Content-Type is the sniffed MIME; Content-Length, Accept-Ranges: bytes and ETag (the sha256) are sent, and HEAD answers the same headers. One `Range: bytes=a-b` gives 206 with Content-Range; an unsatisfiable range gives 416; with If-Range, the range is served only while it names the ETag or Last-Modified exactly (otherwise 200, the whole file). If-None-Match naming the ETag (weak comparison, a list, or *) gives 304 with ETag, Last-Modified and Cache-Control and no body, whatever the Range. A forged id, or one of another applicant or product, gives 404.',
    tags: ['resources'],
    params: {
      path: resourcePath,
      header: z.object({
        Range: z.string().optional().describe('One range, e.g. bytes=0-1048575'),
        'If-Range': z.string().optional().describe('The ETag or Last-Modified the range must belong to'),
        'If-None-Match': ifNoneMatchHeader,
      }),
    },
    responses: {
      200: {
        description: 'The bytes',
        content: { 'application/octet-stream': { schema: { type: 'string', format: 'binary' } } },
      },
      206: {
        description: 'One range of the bytes (Content-Range)',
        content: { 'application/octet-stream': { schema: { type: 'string', format: 'binary' } } },
      },
      304: notModified,
      416: { description: 'Range not satisfiable (Content-Range: bytes */size)' },
      ...APPLICANT,
    },
  }),
  partner({
    method: 'head',
    path: '/v1/applicants/{externalUserId}/resources/{resourceId}',
    operationId: 'headResource',
    summary: 'Size and MIME probe of a resource (the headers of GET, no body)',
    tags: ['resources'],
    params: { path: resourcePath, header: z.object({ 'If-None-Match': ifNoneMatchHeader }) },
    responses: {
      200: {
        description: 'Content-Type (the sniffed MIME), Content-Length, Accept-Ranges and ETag, no body',
      },
      304: notModified,
      ...APPLICANT,
    },
  }),
  partner({
    method: 'get',
    path: '/v1/applicants/{externalUserId}/uploads/history',
    operationId: 'getUploadHistory',
    summary: 'Superseded (inactive) uploads, newest first',
    tags: ['resources'],
    params: { path: applicantPath },
    responses: { 200: ok('Upload history', 'UploadHistory', r.uploadHistoryResponse), ...APPLICANT },
  }),
  {
    method: 'get',
    path: '/api/v1/sdk/links/{shortCode}',
    operationId: 'sdkResolveLink',
    summary: 'Trade the short code of a session link for an SDK token',
    description: 'Public; counted against the client IP.',
    tags: ['sdk'],
    security: [],
    params: { path: z.object({ shortCode: z.string() }) },
    responses: {
      200: ok('The signed SDK token of the link', 'SdkLink', r.sdkLinkResponse),
      404: 'NotFound',
      410: 'Gone',
      429: 'TooManyRequests',
      500: 'ServerError',
    },
  },
  sdk({
    method: 'get',
    path: '/api/v1/sdk/session',
    operationId: 'sdkSession',
    summary: 'The session behind the token: steps, field sets (locked = partner claims), redirects',
    responses: { 200: ok('SDK session', 'SdkSession', r.sdkSessionResponse), ...COMMON },
  }),
  sdk({
    method: 'post',
    path: '/api/v1/sdk/personal-info',
    operationId: 'sdkPersonalInfo',
    summary: 'Save personal (and company) fields',
    description:
      'A flat object of level keys. A changed locked value is refused and named in lockedFields; an unchanged one is accepted; keys the level does not enable are dropped; null or "" clears an editable value.',
    body: { schema: named('SdkPersonalInfo', sdkPersonalInfoSchema) },
    responses: {
      200: ok('The stored values', 'SdkPersonalInfoResult', r.sdkPersonalInfoResponse),
      400: 'BadRequest',
      409: 'SdkConflict',
      ...COMMON,
    },
  }),
  sdk({
    method: 'post',
    path: '/api/v1/sdk/questionnaire',
    operationId: 'sdkQuestionnaire',
    summary: "Answer the level's questionnaire",
    body: { schema: named('SdkQuestionnaireAnswers', questionnaireAnswersSchema) },
    responses: {
      200: ok(
        'The stored answers, and the required questions still missing',
        'SdkQuestionnaireResult',
        r.sdkQuestionnaireResponse,
      ),
      400: 'BadRequest',
      409: 'SdkConflict',
      ...COMMON,
    },
  }),
  sdk({
    method: 'post',
    path: '/api/v1/sdk/uploads/{slot}',
    operationId: 'sdkUpload',
    summary: 'Upload one file into a slot',
    description:
      'multipart/form-data: optional text fields documentType, side and source, then one file part named "file". The type is sniffed from the bytes: image slots take jpeg, png, heic, webp; company_doc and additional also pdf; liveness_video webm and mp4. The upload is kept only once the whole body has been read: nothing is stored on a refusal. 400 `The file is empty` for a file part of zero bytes. 400 for a slot no step of the applicant level uses (document_front and document_back: identity_doc; selfie: selfie; liveness_video: liveness; additional: poa; company_doc: company_docs or company_documents). 409 when the verification was already submitted, or when the slot holds its quota of uploads (MEDIA_MAX_UPLOADS_PER_SLOT, 20 by default, superseded ones included; a new link starts with empty slots). 503 with `X-Error-Code: upload_expired` and `Retry-After: 0` when the stored bytes expired before the upload was recorded: nothing is stored; send the same file again.',
    params: { path: z.object({ slot: z.enum(MEDIA_SLOTS) }) },
    body: {
      schema: named(
        'SdkUpload',
        z.object({
          documentType: z.string().optional(),
          side: z
            .enum(['front', 'back'])
            .optional()
            .describe('The slot says it: front for document_front, back for document_back, none elsewhere'),
          source: z
            .enum(MEDIA_SOURCES)
            .optional()
            .describe('Default docapture, or liveness for liveness_video'),
          file: z.any().meta({ type: 'string', format: 'binary' }),
        }),
      ),
      mediaType: 'multipart/form-data',
    },
    responses: {
      201: ok('Stored; now the active resource of its slot', 'ResourceMetadata', r.resourceMetadataResponse),
      400: 'BadRequest',
      408: 'RequestTimeout',
      409: 'SdkConflict',
      413: 'PayloadTooLarge',
      415: 'UnsupportedMediaType',
      ...COMMON,
      503: 'SdkUploadUnavailable',
    },
  }),
  sdk({
    method: 'post',
    path: '/api/v1/sdk/steps/{kind}/submit',
    operationId: 'sdkSubmitStep',
    summary: 'Move one step to submitted',
    description: '409 names what is missing.',
    params: { path: z.object({ kind: z.enum(VERIFICATION_STEP_KINDS) }) },
    responses: {
      200: ok('Step submitted', 'SdkStepSubmitResult', r.sdkStepSubmitResponse),
      404: 'NotFound',
      409: 'SdkConflict',
      ...COMMON,
    },
  }),
  sdk({
    method: 'post',
    path: '/api/v1/sdk/submit',
    operationId: 'sdkSubmit',
    summary: 'Submit the enrollment; the checks then run',
    description: 'Once every required input step is submitted (409 names the first missing one).',
    responses: {
      202: ok('Submitted', 'SdkSubmitResult', r.sdkSubmitResponse),
      409: 'SdkConflict',
      ...COMMON,
    },
  }),
  operator({
    method: 'post',
    path: '/admin/v1/products',
    operationId: 'adminCreateProduct',
    summary: 'Create a product (tenant)',
    body: { schema: named('ProductCreate', productCreateSchema) },
    responses: {
      201: ok('The product', 'Product', r.productResponse),
      400: 'BadRequest',
      ...COMMON,
      404: 'NotFound',
    },
  }),
  operator({
    method: 'post',
    path: '/admin/v1/products/{productId}/keys',
    operationId: 'adminCreateKey',
    summary: 'Issue a key pair bound to one environment',
    params: { path: productPath },
    body: { schema: named('KeyCreate', keyCreateSchema) },
    responses: {
      201: ok('The key; the secret is shown only here', 'Key', r.keyResponse),
      400: 'BadRequest',
      404: 'NotFound',
      ...COMMON,
    },
  }),
  operator({
    method: 'post',
    path: '/admin/v1/keys/{apiKey}/deactivate',
    operationId: 'adminDeactivateKey',
    summary: 'Deactivate a key',
    params: { path: z.object({ apiKey: z.string() }) },
    responses: {
      200: ok('Deactivated', 'KeyDeactivated', r.keyDeactivatedResponse),
      404: 'NotFound',
      ...COMMON,
    },
  }),
  operator({
    method: 'post',
    path: '/admin/v1/products/{productId}/levels',
    operationId: 'adminCreateLevel',
    summary: 'Create a level',
    params: { path: productPath },
    body: { schema: named('LevelCreate', levelCreateSchema) },
    responses: {
      201: ok('The level', 'LevelDetail', r.levelDetailResponse),
      400: 'BadRequest',
      404: 'NotFound',
      409: 'Conflict',
      ...COMMON,
    },
  }),
  operator({
    method: 'patch',
    path: '/admin/v1/products/{productId}/levels/{levelName}',
    operationId: 'adminPatchLevel',
    summary: 'Change a level (a rename is refused with 409 once an applicant references it)',
    params: { path: productPath.extend({ levelName: z.string() }) },
    body: { schema: named('LevelPatch', levelPatchSchema) },
    responses: {
      200: ok('The level', 'LevelDetail', r.levelDetailResponse),
      400: 'BadRequest',
      404: 'NotFound',
      409: 'Conflict',
      ...COMMON,
    },
  }),
  operator({
    method: 'post',
    path: '/admin/v1/products/{productId}/questionnaires',
    operationId: 'adminCreateQuestionnaire',
    summary: 'Create a questionnaire (attach it to a level with attachedQuestionnaireId)',
    params: { path: productPath },
    body: { schema: named('QuestionnaireCreate', questionnaireCreateSchema) },
    responses: {
      201: ok('The questionnaire', 'Questionnaire', r.questionnaireResponse),
      400: 'BadRequest',
      404: 'NotFound',
      409: 'Conflict',
      ...COMMON,
    },
  }),
  operator({
    method: 'get',
    path: '/admin/v1/products/{productId}/questionnaires/{questionnaireId}',
    operationId: 'adminGetQuestionnaire',
    summary: 'One questionnaire',
    params: { path: productPath.extend({ questionnaireId: z.string() }) },
    responses: {
      200: ok('The questionnaire', 'Questionnaire', r.questionnaireResponse),
      404: 'NotFound',
      ...COMMON,
    },
  }),
  operator({
    method: 'get',
    path: '/admin/v1/products/{productId}/applicants/{externalUserId}/steps',
    operationId: 'adminGetApplicantSteps',
    summary: 'Every step of the applicant with labels, comments and what the check found',
    params: { path: productPath.extend(applicantPath.shape) },
    responses: {
      200: ok('The applicant status and its steps', 'OperatorSteps', r.operatorStepsResponse),
      404: 'NotFound',
      ...COMMON,
    },
  }),
  operator({
    method: 'post',
    path: '/admin/v1/products/{productId}/applicants/{externalUserId}/steps/{kind}/review',
    operationId: 'adminReviewStep',
    summary: "The operator's decision on one step",
    description:
      "For a step awaitingOperatorReview or in_review. The decision on the last open required step completes the applicant's review (applicantReviewed webhook).",
    params: {
      path: productPath.extend(applicantPath.shape).extend({ kind: z.enum(VERIFICATION_STEP_KINDS) }),
    },
    body: { schema: named('StepReview', stepReviewSchema) },
    responses: {
      200: ok(
        'The step result and the applicant status after it',
        'StepReviewResult',
        r.stepReviewResultResponse,
      ),
      400: 'BadRequest',
      404: 'NotFound',
      409: 'Conflict',
      ...COMMON,
    },
  }),
  operator({
    method: 'post',
    path: '/admin/v1/products/{productId}/applicants/{externalUserId}/{action}',
    operationId: 'adminApplicantAction',
    summary: 'reset, deactivate, activate, blocklist or unblock an applicant',
    description:
      'reset: steps back to pending, verdict cleared (applicantReset). deactivate / activate (applicantDeactivated / applicantActivated). blocklist: no new links, review completed RED FINAL (applicantReviewed). Each is recorded in the review history.',
    params: { path: productPath.extend(applicantPath.shape).extend({ action: z.enum(APPLICANT_ACTIONS) }) },
    body: { schema: named('ApplicantAction', applicantActionSchema), required: false },
    responses: {
      200: ok(
        'The action and the applicant status after it',
        'ApplicantActionResult',
        r.applicantActionResponse,
      ),
      400: 'BadRequest',
      404: 'NotFound',
      409: 'Conflict',
      ...COMMON,
    },
  }),
];

const health = z.object({
  status: z.enum(['ok', 'error']),
  service: z.string(),
  checks: z.record(z.string(), z.object({ status: z.enum(['up', 'down']) }).loose()),
});

/** Builds the document; `extraRoutes` lets another module register its own routes with one line each. */
export function buildVerificationApiDocument(extraRoutes: RouteSpec[] = []): Record<string, unknown> {
  const builder = new OpenApiBuilder({
    title: 'Tessera verification API',
    version: '1.0.0',
    description: [
      'Applicants, levels, session links, stored resources, status, and company applicants with their UBOs.',
      '',
      'Partner calls (`/v1`) carry three headers together: `X-Api-Key` (`vk_live_…` or `vk_test_…`), `X-Api-Secret` and `X-Environment` (`production` or `sandbox`, the environment of the key).',
      'The hosted SDK API (`/api/v1/sdk`) takes `Authorization: Bearer <token>` from `GET /api/v1/sdk/links/{shortCode}`.',
      'The operator API (`/admin/v1`, tag `operator`) takes `Authorization: Bearer $ADMIN_TOKEN` and is off (404) when ADMIN_TOKEN is unset.',
      '',
      'Every error is `{message}` (the first problem found). Every 429 carries `Retry-After`.',
    ].join('\n'),
    servers: [{ url: 'http://localhost:3001', description: 'pnpm start (host mode)' }],
    tags: [
      { name: 'levels', description: 'Verification levels of the product' },
      { name: 'applicants', description: 'Individual and company applicants' },
      { name: 'company', description: 'Company info, structure and UBO rows' },
      { name: 'sessions', description: 'Session links to the hosted SDK' },
      { name: 'status', description: 'Verdict, step results and review history' },
      { name: 'resources', description: 'Stored images, videos and PDFs' },
      { name: 'webhooks', description: 'The partner webhook endpoint and its deliveries' },
      { name: 'webhook-events', description: 'What Tessera POSTs to the configured endpoint' },
      { name: 'sdk', description: 'The hosted SDK API (bearer SDK token)' },
      { name: 'operator', description: 'The operator API (bearer ADMIN_TOKEN)' },
      { name: 'health', description: 'Anonymous checks' },
    ],
    securitySchemes: {
      apiKey: { type: 'apiKey', in: 'header', name: 'X-Api-Key', description: 'vk_live_… or vk_test_…' },
      apiSecret: {
        type: 'apiKey',
        in: 'header',
        name: 'X-Api-Secret',
        description: 'The secret shown once when the key was issued; never log it',
      },
      environment: {
        type: 'apiKey',
        in: 'header',
        name: 'X-Environment',
        description: 'production or sandbox: the environment of the key',
      },
      sdkToken: {
        type: 'http',
        scheme: 'bearer',
        description: 'The token of GET /api/v1/sdk/links/{shortCode}',
      },
      operatorToken: { type: 'http', scheme: 'bearer', description: 'ADMIN_TOKEN' },
    },
    security: {
      partner: ['apiKey', 'apiSecret', 'environment'],
      sdk: ['sdkToken'],
      operator: ['operatorToken'],
    },
    responses: RESPONSES,
  });
  for (const route of [...VERIFICATION_ROUTES, ...extraRoutes]) builder.route(route);
  builder.route({
    method: 'get',
    path: '/health',
    operationId: 'health',
    summary: 'Anonymous health check',
    tags: ['health'],
    security: [],
    responses: {
      200: ok('Postgres and Redis answer', 'Health', health),
      503: ok('Postgres or Redis does not answer', 'Health', health),
    },
  });
  registerWebhookRoutes(builder, {
    base: '/v1/webhooks',
    config: '/v1/webhooks',
    tag: 'webhooks',
    security: ['partner'],
    operationPrefix: 'verification',
    errors: COMMON,
    notFound: 'NotFound',
    badRequest: 'BadRequest',
    badGateway: 'BadGateway',
  });
  registerWebhookEvents(builder, 'verification', 'webhook-events');
  return builder.build();
}
