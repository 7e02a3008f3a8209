import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Verifies a webhook delivery from either API (both send through the same dispatcher, DECISIONS.md "Webhook
 * delivery"):
 * - `X-Webhook-Signature`: lowercase hex HMAC-SHA256 of the raw body, keyed with the UTF-8 bytes of the
 *   whole `whsec_…` secret (the contract's header; it carries no timestamp);
 * - Standard Webhooks `webhook-id`, `webhook-timestamp`, `webhook-signature` (`v1,<base64>` of
 *   HMAC-SHA256 over `id.timestamp.body`, keyed with the base64-decoded part after `whsec_`), whose timestamp
 *   must lie within `toleranceSeconds` of now (default 300), which bounds replays.
 * Every signature header present must match, in constant time, on the exact raw bytes. The Standard Webhooks
 * headers must be present too unless `requireTimestamp` is false: the contract header carries no timestamp, so
 * a delivery stripped of the others would otherwise be accepted however old it is (a replay).
 */
export type HeaderBag = Headers | Record<string, string | string[] | undefined>;

export interface VerifyWebhookInput {
  /** The endpoint's `signingSecret` (`whsec_…`). */
  secret: string;
  /** The raw request body, exactly as received (never a re-serialised object). */
  rawBody: string | Buffer;
  headers: HeaderBag;
  /** Allowed distance of `webhook-timestamp` from now, in seconds (default 300). */
  toleranceSeconds?: number;
  /** Clock in ms (default Date.now). */
  now?: () => number;
  /**
   * Require the timestamped Standard Webhooks signature (default true; every Tessera delivery carries it). Set
   * false only behind a proxy that drops the `webhook-*` headers: `X-Webhook-Signature` alone then passes, and
   * replays are no longer bounded in time.
   */
  requireTimestamp?: boolean;
}

export type WebhookVerification =
  { ok: true; schemes: ('x-webhook-signature' | 'standard-webhooks')[] } | { ok: false; reason: string };

export class WebhookVerificationError extends Error {
  override readonly name = 'WebhookVerificationError';
}

function header(headers: HeaderBag, name: string): string | undefined {
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined;
  const bag = headers as Record<string, string | string[] | undefined>;
  const key = Object.keys(bag).find((k) => k.toLowerCase() === name);
  const value = key === undefined ? undefined : bag[key];
  return Array.isArray(value) ? value[0] : value;
}

function equalBytes(a: Buffer, b: Buffer): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}

/** `X-Webhook-Signature` alone: lowercase hex HMAC-SHA256(secret bytes, raw body), compared in constant time. */
export function verifyWebhookSignature(secret: string, rawBody: string | Buffer, signature: string): boolean {
  if (!/^[0-9a-f]{64}$/.test(signature)) return false;
  const expected = createHmac('sha256', Buffer.from(secret, 'utf8')).update(rawBody).digest();
  return equalBytes(expected, Buffer.from(signature, 'hex'));
}

function standardKey(secret: string): Buffer {
  return Buffer.from(secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret, 'base64');
}

/** The Standard Webhooks check; `undefined` when it passes, else the reason. */
function checkStandard(
  secret: string,
  rawBody: string | Buffer,
  id: string,
  timestamp: string,
  signatures: string,
  toleranceSeconds: number,
  nowMs: number,
): string | undefined {
  if (!/^\d{1,12}$/.test(timestamp)) return 'webhook-timestamp is not Unix seconds';
  if (Math.abs(nowMs / 1000 - Number(timestamp)) > toleranceSeconds)
    return `webhook-timestamp is more than ${toleranceSeconds} s from now`;
  const expected = createHmac('sha256', standardKey(secret))
    .update(`${id}.${timestamp}.`)
    .update(rawBody)
    .digest();
  // The header may list several space-separated signatures (secret rotation); any v1 match passes.
  for (const entry of signatures.split(' ')) {
    const [version, value] = entry.split(',', 2);
    if (version !== 'v1' || !value) continue;
    if (equalBytes(expected, Buffer.from(value, 'base64'))) return undefined;
  }
  return 'webhook-signature does not match';
}

export function verifyWebhook(input: VerifyWebhookInput): WebhookVerification {
  const { secret, rawBody, headers } = input;
  if (!secret) return { ok: false, reason: 'no signing secret given' };
  const schemes: ('x-webhook-signature' | 'standard-webhooks')[] = [];

  const hex = header(headers, 'x-webhook-signature');
  if (hex !== undefined) {
    if (!verifyWebhookSignature(secret, rawBody, hex))
      return { ok: false, reason: 'X-Webhook-Signature does not match' };
    schemes.push('x-webhook-signature');
  }

  const signature = header(headers, 'webhook-signature');
  if (signature !== undefined) {
    const id = header(headers, 'webhook-id');
    const timestamp = header(headers, 'webhook-timestamp');
    if (!id || !timestamp) return { ok: false, reason: 'webhook-id or webhook-timestamp missing' };
    const reason = checkStandard(
      secret,
      rawBody,
      id,
      timestamp,
      signature,
      input.toleranceSeconds ?? 300,
      (input.now ?? Date.now)(),
    );
    if (reason) return { ok: false, reason };
    schemes.push('standard-webhooks');
  }

  if (schemes.length === 0) return { ok: false, reason: 'no signature header' };
  if (!schemes.includes('standard-webhooks') && (input.requireTimestamp ?? true)) {
    return { ok: false, reason: 'webhook-signature missing: the timestamped signature is required' };
  }
  return { ok: true, schemes };
}

/** The envelope every delivery carries, `sequence` included (decision 0225; absent only from older servers). */
export interface WebhookEnvelope<D = Record<string, unknown>> {
  eventType: string;
  entityType: string;
  entityId: string;
  timestamp: string;
  data: D;
  sequence?: number;
  [key: string]: unknown;
}

/** Verifies, then parses the envelope; throws WebhookVerificationError (answer 401) when it does not verify. */
export function constructWebhookEvent<D = Record<string, unknown>>(
  input: VerifyWebhookInput,
): WebhookEnvelope<D> {
  const result = verifyWebhook(input);
  if (!result.ok) throw new WebhookVerificationError(result.reason);
  const text = typeof input.rawBody === 'string' ? input.rawBody : input.rawBody.toString('utf8');
  return JSON.parse(text) as WebhookEnvelope<D>;
}
