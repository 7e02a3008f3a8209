import { createHmac, timingSafeEqual } from 'node:crypto';

/** Headers of a signed custody request (DECISIONS.md, "Custody API"). */
export const SIGNATURE_HEADERS = {
  apiKey: 'x-api-key',
  timestamp: 'x-timestamp',
  signature: 'x-signature',
} as const;

export interface SignableRequest {
  /** Unix seconds, or 13-digit milliseconds, exactly as sent in X-Timestamp. */
  timestamp: string;
  method: string;
  /** Path with its query string, exactly as sent (`/transactions?take=5`). */
  pathWithQuery: string;
  /** The exact raw body bytes ('' when there is none). */
  body?: string | Buffer;
}

function signatureDigest(secret: string, request: SignableRequest): Buffer {
  const hmac = createHmac('sha256', secret);
  hmac.update(request.timestamp, 'utf8');
  hmac.update(request.method.toUpperCase(), 'utf8');
  hmac.update(request.pathWithQuery, 'utf8');
  if (request.body !== undefined) hmac.update(request.body);
  return hmac.digest();
}

/** Lowercase hex HMAC-SHA256(secret, timestamp + METHOD + pathWithQuery + rawBody). */
export function computeRequestSignature(secret: string, request: SignableRequest): string {
  return signatureDigest(secret, request).toString('hex');
}

const HEX_SHA256 = /^[0-9a-f]{64}$/;

/**
 * Constant-time check of a lowercase hex signature. Anything but 64 hex digits is refused before the
 * comparison (the length of a signature is no secret); the 32 bytes are then compared in constant time.
 */
export function verifyRequestSignature(secret: string, request: SignableRequest, signature: string): boolean {
  if (!HEX_SHA256.test(signature)) return false;
  return timingSafeEqual(signatureDigest(secret, request), Buffer.from(signature, 'hex'));
}

/**
 * Parses X-Timestamp: Unix seconds (up to 10 digits) or 13-digit milliseconds. Returns milliseconds,
 * or undefined when the value is not one of those forms.
 */
export function parseRequestTimestamp(value: string | undefined): number | undefined {
  if (!value || !/^\d{1,13}$/.test(value)) return undefined;
  if (value.length === 13) return Number(value);
  if (value.length <= 10) return Number(value) * 1000;
  return undefined;
}

/** True when the timestamp is within `driftSeconds` of `nowMs` (either direction). */
export function timestampWithinDrift(timestampMs: number, nowMs: number, driftSeconds = 30): boolean {
  return Math.abs(nowMs - timestampMs) <= driftSeconds * 1000;
}

let lastTimestampMs = 0;

/**
 * A millisecond timestamp that never repeats within this process: two identical requests signed in the
 * same millisecond would otherwise carry the same signature, and the replay cache refuses the second.
 */
export function uniqueTimestampMs(): string {
  lastTimestampMs = Math.max(Date.now(), lastTimestampMs + 1);
  return String(lastTimestampMs);
}

/**
 * The client side (tests, bench, a future SDK): the three headers for one request.
 * `timestamp` defaults to a process-unique millisecond timestamp, so two identical requests differ.
 */
export function signRequest(
  apiKey: string,
  secret: string,
  request: Omit<SignableRequest, 'timestamp'> & { timestamp?: string },
): Record<string, string> {
  const timestamp = request.timestamp ?? uniqueTimestampMs();
  const signature = computeRequestSignature(secret, { ...request, timestamp });
  return {
    [SIGNATURE_HEADERS.apiKey]: apiKey,
    [SIGNATURE_HEADERS.timestamp]: timestamp,
    [SIGNATURE_HEADERS.signature]: signature,
  };
}
