import { createHmac, randomBytes } from 'node:crypto';
import { safeEqual } from './secrets';

const PREFIX = 'whsec_';

/** A webhook signing secret: `whsec_` + base64 of 32 random bytes (Standard Webhooks form). */
export function generateWebhookSecret(): string {
  return PREFIX + randomBytes(32).toString('base64');
}

/** `X-Webhook-Signature`: lowercase hex HMAC-SHA256 of the raw body, keyed with the UTF-8 bytes of the whole secret. */
export function signWebhookBody(secret: string, rawBody: string | Buffer): string {
  return createHmac('sha256', Buffer.from(secret, 'utf8')).update(rawBody).digest('hex');
}

/** The Standard Webhooks key: the base64-decoded part after `whsec_`. */
export function standardWebhooksKey(secret: string): Buffer {
  const encoded = secret.startsWith(PREFIX) ? secret.slice(PREFIX.length) : secret;
  return Buffer.from(encoded, 'base64');
}

/** `webhook-signature`: `v1,<base64 HMAC-SHA256 of "id.timestamp.body">`. */
export function signStandardWebhook(
  secret: string,
  id: string,
  timestampSeconds: number,
  rawBody: string | Buffer,
): string {
  const mac = createHmac('sha256', standardWebhooksKey(secret))
    .update(`${id}.${timestampSeconds}.`)
    .update(rawBody)
    .digest('base64');
  return `v1,${mac}`;
}

// A type, not an interface, so that it is assignable to Record<string, string> (a header map).
export type WebhookHeaders = {
  'content-type': string;
  'x-webhook-signature': string;
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
};

/** Every signature header of one attempt. `timestampSeconds` is the attempt's time, `id` the event id. */
export function webhookHeaders(
  secret: string,
  id: string,
  timestampSeconds: number,
  rawBody: string,
): WebhookHeaders {
  return {
    'content-type': 'application/json',
    'x-webhook-signature': signWebhookBody(secret, rawBody),
    'webhook-id': id,
    'webhook-timestamp': String(timestampSeconds),
    'webhook-signature': signStandardWebhook(secret, id, timestampSeconds, rawBody),
  };
}

/** Receiver-side check of `X-Webhook-Signature` on the exact raw bytes, in constant time. */
export function verifyWebhookBody(secret: string, rawBody: string | Buffer, signature: string): boolean {
  return safeEqual(signWebhookBody(secret, rawBody), signature);
}
