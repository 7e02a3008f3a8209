import { createHmac } from 'node:crypto';
import { safeEqual } from './secrets';

/** What a hosted-SDK session token carries. Times are seconds since the epoch. */
export interface SdkTokenClaims {
  /** Enrollment id. */
  sub: string;
  /** Applicant id. */
  aid: string;
  /** Product (tenant) id. */
  pid: string;
  /** Expiry. */
  exp: number;
  /** Issued at. */
  iat: number;
}

export type SdkTokenCheck =
  { ok: true; claims: SdkTokenClaims } | { ok: false; reason: 'malformed' | 'signature' | 'expired' };

const PREFIX = 'sdk1';

/**
 * Compact signed token for the hosted SDK: `sdk1.<claims base64url>.<HMAC-SHA256 base64url>`.
 * The key is a pepper derived from SECRETS_MASTER_KEY for the purpose `sdk-token` (SecretBox.pepper).
 */
export function signSdkToken(claims: SdkTokenClaims, key: Buffer): string {
  const body = Buffer.from(JSON.stringify(claims), 'utf8').toString('base64url');
  return `${PREFIX}.${body}.${mac(body, key)}`;
}

export function verifySdkToken(token: string, key: Buffer, nowMs = Date.now()): SdkTokenCheck {
  const parts = token.split('.');
  if (parts.length !== 3 || parts[0] !== PREFIX || !parts[1] || !parts[2]) {
    return { ok: false, reason: 'malformed' };
  }
  if (!safeEqual(parts[2], mac(parts[1], key))) return { ok: false, reason: 'signature' };
  let claims: SdkTokenClaims;
  try {
    claims = JSON.parse(Buffer.from(parts[1], 'base64url').toString('utf8')) as SdkTokenClaims;
  } catch {
    return { ok: false, reason: 'malformed' };
  }
  if (typeof claims.exp !== 'number' || typeof claims.sub !== 'string')
    return { ok: false, reason: 'malformed' };
  if (claims.exp * 1000 <= nowMs) return { ok: false, reason: 'expired' };
  return { ok: true, claims };
}

function mac(body: string, key: Buffer): string {
  return createHmac('sha256', key).update(`${PREFIX}.${body}`, 'utf8').digest('base64url');
}
