import type { CatalogEntry, DeliveryDetail, DeliverySummary, WebhookConfiguration } from './custody-models';
import type { VerificationResult } from './openapi-types';
import { type CursorPage, PageIterator } from './pagination';
import { type ApiResponse, fillPath, type RequestSpec, Transport, type TransportOptions } from './transport';
import type {
  Applicant,
  ApplicantCreate,
  ApplicantStatus,
  ApplicantSteps,
  LevelDetail,
  LevelSummary,
  ListOf,
  Presentation,
  ResourceMetadata,
  ReviewHistoryItem,
  SandboxReview,
  SessionLink,
  SpawnResult,
  UboCreate,
  UboRow,
} from './verification-models';

export interface VerificationClientOptions extends TransportOptions {
  /** `X-Api-Key`: `vk_live_…` or `vk_test_…`. */
  apiKey: string;
  /** `X-Api-Secret`, shown once at issue. Sent as a header (the contract's scheme); never logged. */
  apiSecret: string;
  /** `X-Environment`: the key's environment (default `production`; sandbox keys need `sandbox`). */
  environment?: 'production' | 'sandbox';
}

export interface CallOptions {
  signal?: AbortSignal;
}

export type VerificationClient = ReturnType<typeof createVerificationClient>;

const A = '/v1/applicants/{externalUserId}';

/**
 * The verification API client. Every request carries `X-Api-Key`, `X-Api-Secret` and `X-Environment`;
 * 429 sleeps `Retry-After`; 502/503/504 back off about 1, 2, 4, 8 s (capped near 30 s) on idempotent calls
 * (GET, and POST /v1/applicants, which the contract makes idempotent on externalUserId).
 */
export function createVerificationClient(options: VerificationClientOptions) {
  if (!options.apiKey || !options.apiSecret) throw new TypeError('apiKey and apiSecret are required');
  const headers = {
    'x-api-key': options.apiKey,
    'x-api-secret': options.apiSecret,
    'x-environment': options.environment ?? 'production',
  };
  const transport = new Transport(options, { resignOn401: false, headers: () => headers });
  const call = async <T>(spec: RequestSpec): Promise<T> => (await transport.request<T>(spec)).data;
  const applicant = (externalUserId: string, suffix = '') => fillPath(A + suffix, { externalUserId });
  const ubo = (externalUserId: string, uboIndex: number, suffix = '') =>
    fillPath(`${A}/ubos/{uboIndex}${suffix}`, { externalUserId, uboIndex });

  return {
    /** Any call the typed surface does not cover yet (same credentials, retries and errors). */
    request: <T = unknown>(spec: RequestSpec): Promise<ApiResponse<T>> => transport.request<T>(spec),

    levels: {
      list: (
        query: { type?: 'individual' | 'company' | 'all'; includeInactive?: boolean } = {},
        o: CallOptions = {},
      ) =>
        call<VerificationResult<'/v1/levels', 'get', ListOf<LevelSummary>>>({
          method: 'GET',
          path: '/v1/levels',
          query,
          ...o,
        }),
      get: (levelName: string, o: CallOptions = {}) =>
        call<VerificationResult<'/v1/levels/{levelName}', 'get', LevelDetail>>({
          method: 'GET',
          path: fillPath('/v1/levels/{levelName}', { levelName }),
          ...o,
        }),
    },

    applicants: {
      /** Idempotent on externalUserId (201 the first time, 200 with the same applicant after), so it is retried. */
      create: (body: ApplicantCreate, o: CallOptions = {}) =>
        call<VerificationResult<'/v1/applicants', 'post', Applicant>>({
          method: 'POST',
          path: '/v1/applicants',
          body,
          idempotent: true,
          ...o,
        }),
      get: (externalUserId: string, o: CallOptions = {}) =>
        call<VerificationResult<'/v1/applicants/{externalUserId}', 'get', Applicant>>({
          method: 'GET',
          path: applicant(externalUserId),
          ...o,
        }),
      status: (externalUserId: string, o: CallOptions = {}) =>
        call<VerificationResult<'/v1/applicants/{externalUserId}/status', 'get', ApplicantStatus>>({
          method: 'GET',
          path: applicant(externalUserId, '/status'),
          ...o,
        }),
      steps: (externalUserId: string, o: CallOptions = {}) =>
        call<VerificationResult<'/v1/applicants/{externalUserId}/steps', 'get', ApplicantSteps>>({
          method: 'GET',
          path: applicant(externalUserId, '/steps'),
          ...o,
        }),
      reviewHistory: (
        externalUserId: string,
        query: { since?: string; limit?: number; eventType?: string } = {},
        o: CallOptions = {},
      ) =>
        call<ListOf<ReviewHistoryItem>>({
          method: 'GET',
          path: applicant(externalUserId, '/review-history'),
          query,
          ...o,
        }),
      /** Mints a session link for a level (202 `{url, shortCode, …}`). Not retried on 5xx: each call mints one. */
      createSession: (
        externalUserId: string,
        query: Presentation & { verificationLevelName: string },
        o: CallOptions = {},
      ) =>
        call<SessionLink>({
          method: 'POST',
          path: applicant(externalUserId, '/verification-sessions'),
          query: { ...query },
          ...o,
        }),
      /** Mints a session link on the applicant's current level. */
      createVerification: (externalUserId: string, query: Presentation = {}, o: CallOptions = {}) =>
        call<SessionLink>({
          method: 'POST',
          path: applicant(externalUserId, '/verifications'),
          query: { ...query },
          ...o,
        }),
      companyInfo: (externalUserId: string, o: CallOptions = {}) =>
        call<
          VerificationResult<'/v1/applicants/{externalUserId}/company-info', 'get', Record<string, unknown>>
        >({
          method: 'GET',
          path: applicant(externalUserId, '/company-info'),
          ...o,
        }),
      updateCompanyInfo: (externalUserId: string, body: Record<string, unknown>, o: CallOptions = {}) =>
        call<Record<string, unknown>>({
          method: 'PATCH',
          path: applicant(externalUserId, '/company-info'),
          body,
          ...o,
        }),
      /** An individual's identity fields: a value claims the field, `null` reopens it for the end user. */
      updatePersonalInfo: (externalUserId: string, body: Record<string, unknown>, o: CallOptions = {}) =>
        call<VerificationResult<'/v1/applicants/{externalUserId}/personal-info', 'patch', Applicant>>({
          method: 'PATCH',
          path: applicant(externalUserId, '/personal-info'),
          body,
          ...o,
        }),
      companyStructure: (externalUserId: string, o: CallOptions = {}) =>
        call<
          VerificationResult<
            '/v1/applicants/{externalUserId}/company-structure',
            'get',
            Record<string, unknown>
          >
        >({
          method: 'GET',
          path: applicant(externalUserId, '/company-structure'),
          ...o,
        }),
      resources: (
        externalUserId: string,
        query: { enrollmentId?: string; kind?: 'image' | 'video' | 'pdf' | 'all'; activeOnly?: boolean } = {},
        o: CallOptions = {},
      ) =>
        call<ListOf<ResourceMetadata>>({
          method: 'GET',
          path: applicant(externalUserId, '/resources'),
          query,
          ...o,
        }),
      /** The stored bytes of one resource (active or historical). */
      downloadResource: (externalUserId: string, resourceId: string, o: CallOptions = {}) =>
        call<Buffer>({
          method: 'GET',
          path: fillPath(`${A}/resources/{resourceId}`, { externalUserId, resourceId }),
          responseType: 'bytes',
          ...o,
        }),
      uploadsHistory: (externalUserId: string, o: CallOptions = {}) =>
        call<ListOf<Record<string, unknown>>>({
          method: 'GET',
          path: applicant(externalUserId, '/uploads/history'),
          ...o,
        }),
    },

    ubos: {
      list: (externalUserId: string, o: CallOptions = {}) =>
        call<unknown>({ method: 'GET', path: applicant(externalUserId, '/ubos'), ...o }),
      add: (externalUserId: string, body: UboCreate, o: CallOptions = {}) =>
        call<UboRow>({ method: 'POST', path: applicant(externalUserId, '/ubos'), body, ...o }),
      update: (externalUserId: string, uboIndex: number, body: Partial<UboCreate>, o: CallOptions = {}) =>
        call<UboRow>({ method: 'PATCH', path: ubo(externalUserId, uboIndex), body, ...o }),
      /** Idempotent on the row's linked child (a repeat answers `alreadyLinked: true`), so it is retried. */
      spawnKyc: (
        externalUserId: string,
        uboIndex: number,
        body: Presentation & { levelName?: string } = {},
        o: CallOptions = {},
      ) =>
        call<SpawnResult>({
          method: 'POST',
          path: ubo(externalUserId, uboIndex, '/spawn-kyc'),
          body,
          idempotent: true,
          ...o,
        }),
      regenerateLink: (
        externalUserId: string,
        uboIndex: number,
        body: Presentation = {},
        o: CallOptions = {},
      ) =>
        call<Omit<SpawnResult, 'childExternalUserId' | 'alreadyLinked'>>({
          method: 'POST',
          path: ubo(externalUserId, uboIndex, '/regenerate-link'),
          body,
          ...o,
        }),
    },

    sandbox: {
      /** Sandbox credentials only: completes the review as production would (events and webhooks included). */
      review: (externalUserId: string, body: SandboxReview, o: CallOptions = {}) =>
        call<ApplicantStatus & { steps: ApplicantSteps['steps'] }>({
          method: 'POST',
          path: applicant(externalUserId, '/sandbox/review'),
          body,
          ...o,
        }),
    },

    webhooks: {
      /** Sets the endpoint; `signingSecret` is in the answer only when one was generated. Not retried on 5xx. */
      configure: (body: { url: string; subscribedEventTypes?: string[] | null }, o: CallOptions = {}) =>
        call<WebhookConfiguration>({ method: 'PUT', path: '/v1/webhooks', body, ...o }),
      get: (o: CallOptions = {}) => call<WebhookConfiguration>({ method: 'GET', path: '/v1/webhooks', ...o }),
      sendTest: (o: CallOptions = {}) => call<unknown>({ method: 'POST', path: '/v1/webhooks/test', ...o }),
      catalog: (o: CallOptions = {}) =>
        call<CatalogEntry[]>({ method: 'GET', path: '/v1/webhooks/events/catalog', ...o }),
      deliveries: {
        list: (query: { pageSize?: number; status?: DeliverySummary['status'] } = {}) =>
          new PageIterator<DeliverySummary>((cursor) =>
            call<CursorPage<DeliverySummary>>({
              method: 'GET',
              path: '/v1/webhooks/deliveries',
              query: { ...query, cursor },
            }),
          ),
        get: (id: string, o: CallOptions = {}) =>
          call<DeliveryDetail>({
            method: 'GET',
            path: fillPath('/v1/webhooks/deliveries/{id}', { id }),
            ...o,
          }),
        retry: (id: string, o: CallOptions = {}) =>
          call<unknown>({
            method: 'POST',
            path: fillPath('/v1/webhooks/deliveries/{id}/retry', { id }),
            ...o,
          }),
      },
    },
  };
}
