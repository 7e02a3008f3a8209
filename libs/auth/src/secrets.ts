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
 * Constant-time string comparison. Both sides are hashed first, so neither the content nor the length of
 * the expected value leaks through timing.
 */
export function safeEqual(a: string, b: string): boolean {
  const ha = createHash('sha256').update(a, 'utf8').digest();
  const hb = createHash('sha256').update(b, 'utf8').digest();
  return timingSafeEqual(ha, hb) && a.length === b.length;
}
