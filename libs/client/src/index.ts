export { createCustodyClient, type CustodyClient, type CustodyClientOptions } from './custody-client';
export {
  createVerificationClient,
  type VerificationClient,
  type VerificationClientOptions,
} from './verification-client';
export * from './custody-models';
export * from './verification-models';
export { custodySignature, custodySignedHeaders, monotonicMsClock } from './custody-signing';
export { TesseraApiError, TesseraNetworkError } from './errors';
export { IDEMPOTENCY_KEY_PATTERN, newIdempotencyKey } from './idempotency';
export type { CustodyPaths, VerificationPaths } from './openapi-types';
export { type CursorPage, PageIterator } from './pagination';
export { backoffDelayMs, type RetryOptions } from './retry-policy';
export {
  type ApiResponse,
  type ClientLogger,
  consoleLogger,
  type RequestSpec,
  type RetryEvent,
  silentLogger,
} from './transport';
export {
  constructWebhookEvent,
  verifyWebhook,
  verifyWebhookSignature,
  type VerifyWebhookInput,
  type WebhookEnvelope,
  type WebhookVerification,
  WebhookVerificationError,
} from './webhooks/webhook-verification';
export {
  type ReorderResult,
  type SequencedEnvelope,
  type SequenceGap,
  SequenceReorderer,
  type SequenceReordererOptions,
} from './webhooks/sequence-reorderer';
