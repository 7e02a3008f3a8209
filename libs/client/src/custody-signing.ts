import { createHmac } from 'node:crypto';

/**
 * Custody request signing (DECISIONS.md, "Custody API"): `X-Signature` is lowercase hex
 * HMAC-SHA256(secret, timestamp + METHOD + pathWithQuery + rawBody), `X-Timestamp` is the 13-digit
 * millisecond form. The same algorithm as libs/auth (the server's verifier); src/custody-signing.spec.ts
 * checks the two agree, so this package carries no server code.
 */
export function custodySignature(
  secret: string,
  timestamp: string,
  method: string,
  pathWithQuery: string,
  rawBody: string,
): string {
  return createHmac('sha256', secret)
    .update(timestamp, 'utf8')
    .update(method.toUpperCase(), 'utf8')
    .update(pathWithQuery, 'utf8')
    .update(rawBody, 'utf8')
    .digest('hex');
}

/**
 * A millisecond clock that never repeats within one signer: the server refuses a reused (key, timestamp,
 * signature) tuple for 60 s, so two identical requests (or a retry) must never share a timestamp.
 */
export function monotonicMsClock(now: () => number = Date.now): () => string {
  let last = 0;
  return () => {
    last = Math.max(now(), last + 1);
    return String(last);
  };
}

export interface CustodyCredentials {
  apiKey: string;
  apiSecret: string;
}

/** The three headers of one signed try. Called again for every try, so every try has its own tuple. */
export function custodySignedHeaders(
  credentials: CustodyCredentials,
  timestamp: string,
  method: string,
  pathWithQuery: string,
  rawBody: string,
): Record<string, string> {
  return {
    'x-api-key': credentials.apiKey,
    'x-timestamp': timestamp,
    'x-signature': custodySignature(credentials.apiSecret, timestamp, method, pathWithQuery, rawBody),
  };
}
