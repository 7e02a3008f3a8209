import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/** A random secret of `bytes` bytes, base64url without padding (256 bits by default). */
export function randomSecret(bytes = 32): string {
  return randomBytes(bytes).toString('base64url');
}

/** Keyed hash for secrets we only need to verify, never to read back (verification API secrets). */
export function hashSecret(secret: string, pepper: Buffer | string): string {
  return createHmac('sha256', pepper).update(secret, 'utf8').digest('hex');
}

/**
 * Whether `secret` is the one whose `hashSecret` is `expectedHex`: one HMAC and one constant-time compare of
 * two 32-byte digests (no second hashing as in `safeEqual`: both sides already have a fixed length).
 * A malformed `expectedHex` never matches.
 */
export function secretMatchesHash(secret: string, pepper: Buffer | string, expectedHex: string): boolean {
  const actual = createHmac('sha256', pepper).update(secret, 'utf8').digest();
  const expected = Buffer.from(expectedHex, 'hex');
  if (expected.length !== actual.length) {
    timingSafeEqual(actual, actual);
    return false;
  }
  return timingSafeEqual(actual, expected);
}

/**
 * Constant-time string comparison. Both sides are hashed first, so neither the content nor the length of
 * the expected value leaks through timing.
 */
export function safeEqual(a: string, b: string): boolean {
  const ha = createHash('sha256').update(a, 'utf8').digest();
  const hb = createHash('sha256').update(b, 'utf8').digest();
  return timingSafeEqual(ha, hb) && a.length === b.length;
}
