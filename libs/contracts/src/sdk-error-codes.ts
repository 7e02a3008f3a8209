// This module imports nothing: the hosted page (apps/sdk-web) bundles it as it is, so the page and the API
// read the codes from one place (decision 0479). Keep it free of imports (zod, node:*), or the page grows.

/**
 * Machine-readable reasons of the hosted SDK API's refusals and failures, sent as the `X-Error-Code` header
 * beside the contract's `{message}` body (decisions 0458, 0469), so the page never reads the English message.
 */
export const SDK_ERROR_CODES = {
  /** 409: the verification was submitted (or closed) before this write reached the database. */
  verificationSubmitted: 'verification_submitted',
  /** 409: the upload's slot holds MEDIA_MAX_UPLOADS_PER_SLOT uploads already (decision 0446). */
  uploadLimit: 'upload_limit',
  /**
   * 503 of an upload (with `Retry-After: 0`): its stored bytes expired before it was recorded (swept, or the
   * body outlasted MEDIA_STAGED_TTL_SECONDS; decisions 0460, 0464). Nothing is recorded; send the same file
   * again now (decision 0469).
   */
  uploadExpired: 'upload_expired',
} as const;

/** One of the SDK API's `X-Error-Code` values. */
export type SdkErrorCode = (typeof SDK_ERROR_CODES)[keyof typeof SDK_ERROR_CODES];
