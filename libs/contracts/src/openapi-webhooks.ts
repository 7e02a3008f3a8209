import { z } from 'zod';
import { named, type OpenApiBuilder, type ResponseSpec } from './openapi-builder';
import {
  catalogReply,
  deliveryDetail,
  deliveryPage,
  listDeliveriesQuery,
  putEndpointBody,
  testDeliveryReply,
  webhookConfiguration,
} from './webhooks';
import { WEBHOOK_CATALOG, type WebhookSource, webhookEnvelope } from './webhooks-catalog';

const pascal = (eventType: string) =>
  eventType
    .split(/[^A-Za-z0-9]+/)
    .map((part) => part.charAt(0).toUpperCase() + part.slice(1))
    .join('');

/** The headers of every delivery (DECISIONS "Webhook delivery"). */
export const webhookDeliveryHeaders = z.object({
  'X-Webhook-Signature': z
    .string()
    .regex(/^[0-9a-f]{64}$/)
    .describe(
      'Lowercase hex HMAC-SHA256 of the raw body, keyed with the UTF-8 bytes of the whole signingSecret. Verify on the raw bytes before parsing.',
    ),
  'webhook-id': z.string().describe('Standard Webhooks: the event id, stable across retries'),
  'webhook-timestamp': z.string().regex(/^\d+$/).describe('Standard Webhooks: Unix seconds of this attempt'),
  'webhook-signature': z
    .string()
    .describe(
      'Standard Webhooks: `v1,<base64 HMAC-SHA256 of "id.timestamp.body">`, keyed with the base64-decoded part of the secret after `whsec_`',
    ),
});

/**
 * Every event of the source's live catalog (webhooks-catalog.ts) in the `webhooks` section: the envelope
 * `{eventType, entityType, entityId, timestamp, data, sequence}` with the event's own `data` schema.
 */
export function registerWebhookEvents(builder: OpenApiBuilder, source: WebhookSource, tag: string): void {
  for (const entry of WEBHOOK_CATALOG[source]) {
    const name = pascal(entry.eventType);
    // `.describe` clones: one component per event even when events share a payload schema.
    const data = entry.schema.describe(entry.description);
    builder.schema(named(`${name}Data`, data));
    const envelope = z.object({
      eventType: z.literal(entry.eventType),
      entityType: z.literal(entry.entityType),
      entityId: z.string().describe('Stable entity id'),
      timestamp: z.string().datetime({ offset: true }).describe('Emission time, UTC ISO 8601'),
      data,
      sequence: webhookEnvelope.shape.sequence,
    });
    builder.webhook({
      name: entry.eventType,
      summary: entry.eventType,
      description: `${entry.description} Delivered at least once by POST to the configured HTTPS URL; retried after any non-2xx answer or network error.`,
      tags: [tag],
      body: named(`${name}Event`, envelope),
      headers: webhookDeliveryHeaders,
    });
  }
}

export interface WebhookRouteOptions {
  /** Path prefix of the endpoints: `/webhooks` (custody) or `/v1/webhooks` (verification). */
  base: string;
  /** Path of the configuration resource: `/webhooks/outbound` or `/v1/webhooks`. */
  config: string;
  tag: string;
  security: string[];
  operationPrefix: string;
  /** Error responses every call can give (shared response names). */
  errors: Record<number, string>;
  notFound: string;
  badRequest: string;
  badGateway: string;
  /** Scopes the calls need (custody: `webhooks:read` / `webhooks:write`), named in each description. */
  scopes?: { read: string; write: string };
}

const json = (description: string, body: Parameters<typeof named>[1], name: string): ResponseSpec => ({
  description,
  body: named(name, body),
});

/** The partner webhook endpoints (served by libs/webhook-api for both APIs). */
export function registerWebhookRoutes(builder: OpenApiBuilder, o: WebhookRouteOptions): void {
  const base = { tags: [o.tag], security: o.security };
  const scoped = (access: 'read' | 'write', description?: string) => {
    const scope = o.scopes ? `Scope: \`${o.scopes[access]}\`.` : undefined;
    const text = [description, scope].filter(Boolean).join(' ');
    return text ? { description: text } : {};
  };
  const read = { ...base, ...scoped('read') };
  const write = { ...base, ...scoped('write') };
  const id = z.object({ id: z.string().describe('Delivery id') });
  const config = json('The webhook configuration', webhookConfiguration, 'WebhookConfiguration');
  builder
    .route({
      ...base,
      ...scoped(
        'write',
        'The first configuration and every URL change generate a new signingSecret, returned only in that answer; the same URL again answers signingSecret null. After an error answer (5xx), repeat the PUT: if the lost answer carried a secret, the repeat generates and returns a new one. 409 when a concurrent PUT replaced the secret of this one: repeat it. The URL must be https on a public host.',
      ),
      method: 'put',
      path: o.config,
      operationId: `${o.operationPrefix}PutWebhookEndpoint`,
      summary: 'Configure the webhook endpoint',
      body: { schema: named('WebhookEndpointPut', putEndpointBody) },
      responses: { 200: config, 400: o.badRequest, ...o.errors, 409: 'Conflict', 502: o.badGateway },
    })
    .route({
      ...read,
      method: 'get',
      path: o.config,
      operationId: `${o.operationPrefix}GetWebhookEndpoint`,
      summary: 'Read the webhook configuration (signingSecret always null)',
      responses: { 200: config, ...o.errors, 502: o.badGateway },
    })
    .route({
      ...write,
      method: 'post',
      path: `${o.config}/test`,
      operationId: `${o.operationPrefix}SendTestWebhook`,
      summary: 'Send a webhook.test event, signed like real ones',
      responses: {
        200: json('The test delivery', testDeliveryReply, 'TestDelivery'),
        ...o.errors,
        409: 'Conflict',
        502: o.badGateway,
      },
    })
    .route({
      ...read,
      method: 'get',
      path: `${o.base}/events/catalog`,
      operationId: `${o.operationPrefix}WebhookEventCatalog`,
      summary: 'The live list of event types, with a JSON Schema of each payload',
      responses: {
        200: json('Event types', catalogReply, 'WebhookEventCatalog'),
        ...o.errors,
        502: o.badGateway,
      },
    })
    .route({
      ...read,
      method: 'get',
      path: `${o.base}/deliveries`,
      operationId: `${o.operationPrefix}ListWebhookDeliveries`,
      summary: 'Recent deliveries, newest first',
      params: { query: listDeliveriesQuery },
      responses: {
        200: json('A page of deliveries', deliveryPage, 'WebhookDeliveryPage'),
        400: o.badRequest,
        ...o.errors,
        502: o.badGateway,
      },
    })
    .route({
      ...read,
      method: 'get',
      path: `${o.base}/deliveries/{id}`,
      operationId: `${o.operationPrefix}GetWebhookDelivery`,
      summary: 'One delivery with its attempts',
      params: { path: id },
      responses: {
        200: json('The delivery', deliveryDetail, 'WebhookDelivery'),
        ...o.errors,
        404: o.notFound,
        502: o.badGateway,
      },
    })
    .route({
      ...write,
      method: 'post',
      path: `${o.base}/deliveries/{id}/retry`,
      operationId: `${o.operationPrefix}RetryWebhookDelivery`,
      summary: 'Re-queue a failed or dead delivery',
      params: { path: id },
      responses: {
        200: json('The delivery, re-queued', deliveryDetail, 'WebhookDelivery'),
        ...o.errors,
        404: o.notFound,
        409: 'Conflict',
        502: o.badGateway,
      },
    });
}
