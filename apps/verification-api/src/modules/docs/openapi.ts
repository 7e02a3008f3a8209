import {
  applicantCreateSchema,
  companyInfoPatchSchema,
  levelCreateSchema,
  levelPatchSchema,
  MEDIA_SLOTS,
  PARTNER_REVIEW_EVENTS,
  stepReviewSchema,
  sandboxReviewSchema,
} from '@tessera/contracts';
import { z } from 'zod';

type Schema = Record<string, unknown>;

const json = (schema: z.ZodType, io: 'input' | 'output' = 'input'): Schema =>
  z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as Schema;

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const str = { type: 'string' };
const strOrNull = { type: ['string', 'null'] };
const ts = { type: 'string', format: 'date-time' };
const tsOrNull = { type: ['string', 'null'], format: 'date-time' };
const bool = { type: 'boolean' };
const int = { type: 'integer' };
const strings = { type: 'array', items: str };
const obj = (properties: Record<string, unknown>) => ({
  type: 'object',
  properties,
  required: Object.keys(properties),
});

const body = (schema: Schema) => ({ required: true, content: { 'application/json': { schema } } });
const answer = (description: string, schema?: Schema) => ({
  description,
  ...(schema ? { content: { 'application/json': { schema } } } : {}),
});
const errors = (...statuses: number[]) =>
  Object.fromEntries(statuses.map((s) => [String(s), { $ref: `#/components/responses/E${s}` }]));

const externalUserId = { name: 'externalUserId', in: 'path', required: true, schema: str };
const presentationQuery = [
  { name: 'lang', in: 'query', schema: str, description: 'ISO-639 code; an invalid value is dropped.' },
  { name: 'theme', in: 'query', schema: { type: 'string', enum: ['light', 'dark', 'system'] } },
  ...['returnUrl', 'successUrl', 'errorUrl'].map((name) => ({
    name,
    in: 'query',
    schema: { type: 'string', format: 'uri' },
    description: 'Absolute http(s) URL; anything else is dropped silently.',
  })),
  { name: 'ttlDays', in: 'query', schema: { type: 'integer', minimum: 1, maximum: 90, default: 7 } },
];

const partner = (op: Schema) => ({ security: [{ apiKey: [], apiSecret: [], environment: [] }], ...op });
const operator = (op: Schema) => ({ tags: ['operator'], security: [{ operatorToken: [] }], ...op });

/** The OpenAPI 3.1 document served at /docs; request schemas come from the same zod schemas that validate. */
export function buildOpenApiDocument(publicBaseUrl: string): Schema {
  return {
    openapi: '3.1.0',
    info: {
      title: 'Tessera verification API',
      version: '1.0.0',
      description:
        'Partner API (/v1, X-Api-Key + X-Api-Secret + X-Environment) and operator API (/admin/v1, Bearer ADMIN_TOKEN). Every error is {message}.',
    },
    servers: [{ url: publicBaseUrl }],
    components: {
      securitySchemes: {
        apiKey: { type: 'apiKey', in: 'header', name: 'X-Api-Key' },
        apiSecret: { type: 'apiKey', in: 'header', name: 'X-Api-Secret' },
        environment: { type: 'apiKey', in: 'header', name: 'X-Environment' },
        operatorToken: { type: 'http', scheme: 'bearer' },
        sdkToken: { type: 'http', scheme: 'bearer' },
      },
      responses: Object.fromEntries(
        [
          [400, 'Malformed request or missing required field'],
          [401, 'Missing headers or no matching active key'],
          [403, 'The applicant belongs to another product'],
          [404, 'Not found for this product'],
          [409, 'Conflict'],
          [413, 'The file exceeds the size limit of its kind; nothing is stored'],
          [415, 'The magic bytes are not a type allowed for the slot; nothing is stored'],
          [422, 'Semantically rejected'],
          [429, 'Rate limited; see Retry-After'],
        ].map(([status, description]) => [
          `E${status}`,
          { description, content: { 'application/json': { schema: ref('Error') } } },
        ]),
      ),
      schemas: {
        Error: obj({ message: str }),
        ResourceMetadata: obj({
          id: { type: 'string', description: '{enrollmentIdHex32}.{slotCode}.{hmac16}' },
          enrollmentId: str,
          kind: { type: 'string', enum: ['image', 'video', 'pdf'] },
          slot: { type: 'string', enum: [...MEDIA_SLOTS] },
          documentType: strOrNull,
          side: strOrNull,
          mime: str,
          addedAtUtc: ts,
          source: strOrNull,
          active: bool,
        }),
        LevelSummary: obj({
          name: str,
          applicantType: { type: 'string', enum: ['individual', 'company'] },
          isActive: bool,
          isDefault: bool,
          requiredSteps: strings,
        }),
        LevelDetail: obj({
          id: str,
          name: str,
          applicantType: { type: 'string', enum: ['individual', 'company'] },
          isActive: bool,
          isDefault: bool,
          steps: { type: 'array', items: obj({ kind: str, optional: bool, config: { type: 'object' } }) },
          attachedQuestionnaireId: strOrNull,
          personalInfoFields: strings,
          personalInfoRequiredFields: strings,
          companyDataFields: strings,
          companyRequiredFields: strings,
          companyRequiredDocuments: strings,
          companyDocumentsMinRequired: { type: ['integer', 'null'] },
          companyLegalForms: strings,
        }),
        LevelCreate: json(levelCreateSchema),
        LevelPatch: json(levelPatchSchema),
        ApplicantCreate: json(applicantCreateSchema),
        Applicant: obj({
          id: str,
          externalUserId: str,
          type: { type: 'string', enum: ['individual', 'company'] },
          verificationLevelName: strOrNull,
          status: str,
          riskLevel: str,
          createdAtUtc: ts,
          updatedAtUtc: ts,
          lockedFields: strings,
          info: { type: 'object' },
        }),
        CompanyInfoPatch: json(companyInfoPatchSchema),
        CompanyInfo: obj({
          externalUserId: str,
          companyName: strOrNull,
          registrationNumber: strOrNull,
          legalForm: strOrNull,
          incorporationDate: strOrNull,
          registeredAddress: strOrNull,
          country: strOrNull,
          verificationLevelName: strOrNull,
          status: str,
          riskLevel: str,
          createdAtUtc: ts,
          updatedAtUtc: ts,
        }),
        CompanyStructure: obj({
          externalUserId: str,
          hasNoUbos: bool,
          hasNoShareholders: bool,
          hasNoDirectors: bool,
          hasNoRepresentatives: bool,
          counts: obj(
            Object.fromEntries(
              [
                'total',
                'ubos',
                'directors',
                'shareholders',
                'representatives',
                'spawned',
                'completed',
                'rejected',
                'pending',
              ].map((k) => [k, int]),
            ),
          ),
          allChildrenComplete: bool,
          lastChildCompletedAtUtc: tsOrNull,
        }),
        Session: obj({ url: str, shortCode: str, expiresAtUtc: ts, enrollmentId: str, levelName: str }),
        Status: obj({
          externalUserId: str,
          applicantId: str,
          levelName: strOrNull,
          status: str,
          reviewAnswer: strOrNull,
          reviewRejectType: strOrNull,
          rejectLabels: strings,
          moderationComment: strOrNull,
          riskLevel: str,
          attempt: int,
          createdAtUtc: ts,
          reviewedAtUtc: tsOrNull,
        }),
        Steps: obj({
          externalUserId: str,
          levelId: strOrNull,
          levelName: strOrNull,
          steps: {
            type: 'array',
            items: obj({
              kind: str,
              optional: bool,
              reviewAnswer: { type: ['string', 'null'], enum: ['GREEN', 'RED', null] },
              reviewStatus: str,
              reviewRejectType: { type: ['string', 'null'], enum: ['FINAL', 'RETRY', 'EXPIRED', null] },
              lastUpdatedAtUtc: ts,
            }),
          },
        }),
        StepReview: json(stepReviewSchema),
        SandboxReview: json(sandboxReviewSchema),
        StepReviewResult: obj({
          step: obj({
            kind: str,
            optional: bool,
            reviewAnswer: { type: 'string', enum: ['GREEN', 'RED'] },
            reviewStatus: { type: 'string', enum: ['completed'] },
            reviewRejectType: { type: ['string', 'null'], enum: ['FINAL', 'RETRY', null] },
            rejectLabels: strings,
            moderationComment: strOrNull,
            clientComment: strOrNull,
            lastUpdatedAtUtc: ts,
          }),
          reviewCompleted: bool,
          applicant: ref('Status'),
        }),
        ReviewHistory: obj({
          items: { type: 'array', items: obj({ atUtc: ts, eventType: str, actorType: str }) },
          totalItems: int,
        }),
      },
    },
    paths: {
      '/v1/levels': {
        get: partner({
          tags: ['levels'],
          parameters: [
            { name: 'type', in: 'query', schema: { type: 'string', enum: ['individual', 'company', 'all'] } },
            { name: 'includeInactive', in: 'query', schema: { type: 'string', enum: ['true', 'false'] } },
          ],
          responses: {
            200: answer(
              'Levels',
              obj({ items: { type: 'array', items: ref('LevelSummary') }, totalItems: int }),
            ),
            ...errors(400, 401, 429),
          },
        }),
      },
      '/v1/levels/{levelName}': {
        get: partner({
          tags: ['levels'],
          parameters: [{ name: 'levelName', in: 'path', required: true, schema: str }],
          responses: { 200: answer('Level detail', ref('LevelDetail')), ...errors(401, 404, 429) },
        }),
      },
      '/v1/applicants': {
        post: partner({
          tags: ['applicants'],
          requestBody: body(ref('ApplicantCreate')),
          responses: {
            201: answer('Created', ref('Applicant')),
            200: answer('Already existed (idempotent on externalUserId)', ref('Applicant')),
            ...errors(400, 401, 404, 429),
          },
        }),
      },
      '/v1/applicants/{externalUserId}': {
        get: partner({
          tags: ['applicants'],
          parameters: [externalUserId],
          responses: { 200: answer('Applicant', ref('Applicant')), ...errors(401, 403, 404, 429) },
        }),
      },
      '/v1/applicants/{externalUserId}/company-info': {
        get: partner({
          tags: ['company'],
          parameters: [externalUserId],
          responses: { 200: answer('Company info', ref('CompanyInfo')), ...errors(400, 401, 403, 404, 429) },
        }),
        patch: partner({
          tags: ['company'],
          parameters: [externalUserId],
          requestBody: body(ref('CompanyInfoPatch')),
          responses: {
            200: answer('Company info after the change', ref('CompanyInfo')),
            ...errors(400, 401, 403, 404, 409, 429),
          },
        }),
      },
      '/v1/applicants/{externalUserId}/company-structure': {
        get: partner({
          tags: ['company'],
          parameters: [externalUserId],
          responses: {
            200: answer('Company structure', ref('CompanyStructure')),
            ...errors(400, 401, 403, 404, 429),
          },
        }),
      },
      '/v1/applicants/{externalUserId}/verification-sessions': {
        post: partner({
          tags: ['sessions'],
          parameters: [
            externalUserId,
            { name: 'verificationLevelName', in: 'query', required: true, schema: str },
            ...presentationQuery,
          ],
          responses: { 202: answer('Session link', ref('Session')), ...errors(400, 401, 403, 404, 422, 429) },
        }),
      },
      '/v1/applicants/{externalUserId}/verifications': {
        post: partner({
          tags: ['sessions'],
          parameters: [externalUserId, ...presentationQuery],
          responses: { 202: answer('Session link', ref('Session')), ...errors(400, 401, 403, 404, 422, 429) },
        }),
      },
      '/v1/applicants/{externalUserId}/status': {
        get: partner({
          tags: ['status'],
          parameters: [externalUserId],
          responses: { 200: answer('Status', ref('Status')), ...errors(401, 403, 404, 429) },
        }),
      },
      '/v1/applicants/{externalUserId}/steps': {
        get: partner({
          tags: ['status'],
          parameters: [externalUserId],
          responses: {
            200: answer('One entry per required (not optional) step of the level', ref('Steps')),
            ...errors(401, 403, 404, 429),
          },
        }),
      },
      '/v1/applicants/{externalUserId}/sandbox/review': {
        post: partner({
          tags: ['status'],
          description:
            'Sandbox credentials only (production ones get 404): completes the review with the given outcome exactly as production would (status, steps, history, applicantReviewed webhook).',
          parameters: [externalUserId],
          requestBody: body(ref('SandboxReview')),
          responses: {
            200: answer('The status after the review, with the steps', {
              allOf: [ref('Status'), obj({ steps: { type: 'array', items: { type: 'object' } } })],
            }),
            ...errors(400, 401, 403, 404, 409, 422, 429),
          },
        }),
      },
      '/v1/applicants/{externalUserId}/review-history': {
        get: partner({
          tags: ['status'],
          parameters: [
            externalUserId,
            { name: 'since', in: 'query', schema: ts },
            {
              name: 'limit',
              in: 'query',
              schema: { type: 'integer', minimum: 1, maximum: 200, default: 50 },
            },
            { name: 'eventType', in: 'query', schema: { type: 'string', enum: [...PARTNER_REVIEW_EVENTS] } },
          ],
          responses: {
            200: answer('Review history', ref('ReviewHistory')),
            ...errors(400, 401, 403, 404, 429),
          },
        }),
      },
      '/v1/applicants/{externalUserId}/resources': {
        get: partner({
          tags: ['resources'],
          parameters: [
            externalUserId,
            { name: 'enrollmentId', in: 'query', schema: { type: 'string', format: 'uuid' } },
            {
              name: 'kind',
              in: 'query',
              schema: { type: 'string', enum: ['image', 'video', 'pdf', 'all'], default: 'all' },
            },
            {
              name: 'activeOnly',
              in: 'query',
              schema: { type: 'string', enum: ['true', 'false'], default: 'true' },
            },
          ],
          responses: {
            200: answer(
              'Uploads, newest first',
              obj({ items: { type: 'array', items: ref('ResourceMetadata') }, totalItems: int }),
            ),
            ...errors(400, 401, 403, 404, 429),
          },
        }),
      },
      '/v1/applicants/{externalUserId}/resources/{resourceId}': {
        get: partner({
          tags: ['resources'],
          description:
            'The raw bytes, streamed, of an active or historical upload. Content-Type is the sniffed MIME; Content-Length, Accept-Ranges: bytes and ETag (the sha256) are sent; HEAD answers the same headers. One Range gives 206 with Content-Range, an unsatisfiable one 416. A forged id, or one of another applicant or product, gives 404.',
          parameters: [
            externalUserId,
            { name: 'resourceId', in: 'path', required: true, schema: str },
            { name: 'Range', in: 'header', schema: { type: 'string', example: 'bytes=0-1048575' } },
          ],
          responses: {
            200: {
              description: 'The bytes',
              content: { 'application/octet-stream': { schema: { type: 'string', format: 'binary' } } },
            },
            206: { description: 'One range of the bytes' },
            416: { description: 'Range not satisfiable (Content-Range: bytes */size)' },
            ...errors(401, 403, 404, 429),
          },
        }),
      },
      '/v1/applicants/{externalUserId}/uploads/history': {
        get: partner({
          tags: ['resources'],
          parameters: [externalUserId],
          responses: {
            200: answer(
              'Superseded (inactive) uploads, newest first; resourceId works on the bytes endpoint',
              obj({
                items: {
                  type: 'array',
                  items: { type: 'object', properties: { resourceId: str, supersededAtUtc: tsOrNull } },
                },
                totalItems: int,
              }),
            ),
            ...errors(401, 403, 404, 429),
          },
        }),
      },
      '/api/v1/sdk/uploads/{slot}': {
        post: {
          tags: ['sdk'],
          description:
            'Bearer SDK token. multipart/form-data: optional text fields documentType, side (front|back), source, then one file part named "file". The type is sniffed from the bytes: image slots take jpeg, png, heic, webp; company_doc and additional also pdf; liveness_video webm and mp4.',
          security: [{ sdkToken: [] }],
          parameters: [
            { name: 'slot', in: 'path', required: true, schema: { type: 'string', enum: [...MEDIA_SLOTS] } },
          ],
          requestBody: {
            required: true,
            content: {
              'multipart/form-data': {
                schema: {
                  type: 'object',
                  required: ['file'],
                  properties: {
                    documentType: str,
                    side: { type: 'string', enum: ['front', 'back'] },
                    source: str,
                    file: { type: 'string', format: 'binary' },
                  },
                },
              },
            },
          },
          responses: {
            201: answer('Stored; now the active resource of its slot', ref('ResourceMetadata')),
            ...errors(400, 401, 413, 415, 429),
          },
        },
      },
      '/api/v1/sdk/links/{shortCode}': {
        get: {
          tags: ['sdk'],
          parameters: [{ name: 'shortCode', in: 'path', required: true, schema: str }],
          responses: {
            200: answer(
              'Signed SDK token for the link',
              obj({
                token: str,
                expiresAtUtc: ts,
                enrollmentId: str,
                levelName: str,
                presentation: { type: 'object' },
              }),
            ),
            404: { $ref: '#/components/responses/E404' },
            410: answer('Link expired', ref('Error')),
          },
        },
      },
      '/admin/v1/products': {
        post: operator({
          requestBody: body(obj({ name: str })),
          responses: { 201: answer('Product', obj({ id: str, name: str })), ...errors(400, 401, 404, 429) },
        }),
      },
      '/admin/v1/products/{productId}/keys': {
        post: operator({
          parameters: [{ name: 'productId', in: 'path', required: true, schema: str }],
          requestBody: body(obj({ environment: { type: 'string', enum: ['production', 'sandbox'] } })),
          responses: {
            201: answer(
              'Key; the secret is shown only here',
              obj({ apiKey: str, apiSecret: str, environment: str }),
            ),
            ...errors(400, 401, 404, 429),
          },
        }),
      },
      '/admin/v1/keys/{apiKey}/deactivate': {
        post: operator({
          parameters: [{ name: 'apiKey', in: 'path', required: true, schema: str }],
          responses: {
            200: answer('Deactivated', obj({ apiKey: str, active: bool })),
            ...errors(401, 404, 429),
          },
        }),
      },
      '/admin/v1/products/{productId}/levels': {
        post: operator({
          parameters: [{ name: 'productId', in: 'path', required: true, schema: str }],
          requestBody: body(ref('LevelCreate')),
          responses: { 201: answer('Level detail', ref('LevelDetail')), ...errors(400, 401, 404, 409, 429) },
        }),
      },
      '/admin/v1/products/{productId}/applicants/{externalUserId}/steps/{kind}/review': {
        post: operator({
          description:
            "The operator's decision on one step (awaitingOperatorReview or in_review). The decision on the last open required step completes the applicant's review (approved/rejected, applicantReviewed webhook).",
          parameters: [
            { name: 'productId', in: 'path', required: true, schema: str },
            externalUserId,
            { name: 'kind', in: 'path', required: true, schema: str },
          ],
          requestBody: body(ref('StepReview')),
          responses: {
            200: answer('Step result, and the applicant status after the decision', ref('StepReviewResult')),
            ...errors(400, 401, 404, 409, 429),
          },
        }),
      },
      '/admin/v1/products/{productId}/applicants/{externalUserId}/steps': {
        get: operator({
          description:
            "Every step of the applicant's level with its labels, comments and what the automatic check found (checkResult: the screening matches with the listed entry, missing fields...).",
          parameters: [{ name: 'productId', in: 'path', required: true, schema: str }, externalUserId],
          responses: {
            200: answer(
              'The applicant status and its steps',
              obj({ applicant: ref('Status'), steps: { type: 'array', items: { type: 'object' } } }),
            ),
            ...errors(401, 404, 429),
          },
        }),
      },
      '/admin/v1/products/{productId}/applicants/{externalUserId}/{action}': {
        post: operator({
          description:
            'An operator action: reset (steps back to pending, verdict cleared; applicantReset), deactivate / activate (applicantDeactivated / applicantActivated), blocklist (no new links; review completed RED FINAL BLOCKLIST, applicantReviewed), unblock. Each is recorded in the review history.',
          parameters: [
            { name: 'productId', in: 'path', required: true, schema: str },
            externalUserId,
            {
              name: 'action',
              in: 'path',
              required: true,
              schema: { type: 'string', enum: ['reset', 'deactivate', 'activate', 'blocklist', 'unblock'] },
            },
          ],
          requestBody: body(obj({ reason: str })),
          responses: {
            200: answer(
              'The action and the applicant status after it',
              obj({ action: str, applicant: ref('Status') }),
            ),
            ...errors(400, 401, 404, 409, 429),
          },
        }),
      },
      '/admin/v1/products/{productId}/levels/{levelName}': {
        patch: operator({
          parameters: [
            { name: 'productId', in: 'path', required: true, schema: str },
            { name: 'levelName', in: 'path', required: true, schema: str },
          ],
          requestBody: body(ref('LevelPatch')),
          responses: { 200: answer('Level detail', ref('LevelDetail')), ...errors(400, 401, 404, 409, 429) },
        }),
      },
    },
  };
}
