import { randomSecret, type SignableRequest, verifyRequestSignature } from '@tessera/auth';

/** The one answer for an unknown or revoked key and for a wrong signature (no key-existence oracle). */
export const INVALID_KEY_OR_SIGNATURE = 'Invalid API key or signature';

/**
 * A secret no key has, drawn once per process: an unknown key's request is verified against it, so an
 * unknown key costs the same HMAC and constant-time compare as a known key with a wrong signature.
 */
const DUMMY_SECRET = randomSecret();

/**
 * Whether `signature` signs `request` with the key's secret. With no key (unknown or revoked) the same work
 * is done against DUMMY_SECRET and the answer is false: both failures take the same path and the same time
 * (docs/decisions/0013).
 */
export function signatureChecks(
  secret: string | undefined,
  request: SignableRequest,
  signature: string,
): boolean {
  const valid = verifyRequestSignature(secret ?? DUMMY_SECRET, request, signature);
  return secret !== undefined && valid;
}
