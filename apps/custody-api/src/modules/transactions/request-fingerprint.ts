import { badRequest } from '@tessera/platform';
import canonicalize from 'canonicalize';
import { createHash } from 'node:crypto';

/**
 * The Idempotency-Key's "same body" (decision 0477): a hash of the body as the partner sent it, canonicalised by
 * RFC 8785 (JSON Canonicalization Scheme: key order and insignificant whitespace do not count, every member and
 * value does), so a repeat that adds, drops or renames a field, even one the endpoint ignores, is another body.
 * Prefixed, to tell it from the hashes of the parsed fields stored before it (LEGACY below).
 */
const PREFIX = 'jcs:';

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/** The fingerprint of a request body as sent (the parsed JSON value, before any schema drops or trims). */
export function bodyFingerprint(sent: unknown): string {
  let canonical: string | undefined;
  try {
    canonical = canonicalize(sent ?? {});
  } catch (err) {
    // Nesting deeper than the stack: no real request is shaped like that.
    if (err instanceof RangeError) throw badRequest('Request body is nested too deeply');
    throw err;
  }
  return PREFIX + sha256(canonical ?? '');
}

/**
 * Before decision 0477 the stored hash was over the schema-parsed fields only, without a prefix. A key stored
 * then (at most 24 hours before the deploy) is compared that way, so an identical retry across the deploy is not
 * told its body differs.
 */
function legacyFingerprint(parsed: Record<string, unknown>): string {
  // The schemas of then had no key for an absent optional field; a null one parses to undefined now.
  const present = Object.keys(parsed).filter((k) => parsed[k] !== undefined);
  return sha256(JSON.stringify(present.sort().map((k) => [k, parsed[k]])));
}

/** Whether a stored fingerprint names the same request as this one (`sent` as received, `parsed` as validated). */
export function sameRequestBody(stored: string, sent: string, parsed: Record<string, unknown>): boolean {
  return stored.startsWith(PREFIX) ? stored === sent : stored === legacyFingerprint(parsed);
}
