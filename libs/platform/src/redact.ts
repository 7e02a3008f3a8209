/** Keys whose values never reach a log line, wherever they sit in a logged object. */
const SECRET_KEY =
  /^(authorization|proxy-authorization|cookie|set-cookie|x-api-secret|x-signature|x-webhook-signature|webhook-signature)$|secret|password|passphrase|seed|mnemonic|private.?key|token|credential/i;

export const REDACTED = '[REDACTED]';

/**
 * Keys whose values are public only in a known shape: an API key id (`vk_live_…`, `ck_test_…`) is logged, but a
 * value of another shape in that header is most likely a secret sent in the wrong header (a partner who
 * swapped X-Api-Key and X-Api-Secret) and is redacted.
 */
const PUBLIC_ONLY_AS: Record<string, RegExp> = {
  'x-api-key': /^(vk|ck)_(live|test)_[A-Za-z0-9]{1,64}$/,
};

export function isSecretKey(key: string): boolean {
  return SECRET_KEY.test(key);
}

/** Returns a copy of `value` in which every secret-named field is replaced by [REDACTED]. */
export function redactSecrets<T>(value: T, depth = 0): T {
  if (depth > 8 || value === null || typeof value !== 'object') return value;
  if (Buffer.isBuffer(value) || value instanceof Date) return value;
  if (Array.isArray(value)) return value.map((item) => redactSecrets(item, depth + 1)) as T;
  if (value instanceof Error) return value;
  const out: Record<string, unknown> = {};
  for (const [key, inner] of Object.entries(value as Record<string, unknown>)) {
    const shape = PUBLIC_ONLY_AS[key.toLowerCase()];
    if (shape) out[key] = typeof inner === 'string' && shape.test(inner) ? inner : REDACTED;
    else out[key] = isSecretKey(key) ? REDACTED : redactSecrets(inner, depth + 1);
  }
  return out as T;
}
