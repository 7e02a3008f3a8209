import { z } from 'zod';
import { webhookSource } from './webhooks-catalog';

/** RPC patterns served by webhook-dispatcher for the partner-facing webhook endpoints of both APIs. */
export const WEBHOOK_RPC = {
  PUT_ENDPOINT: 'webhook-dispatcher.endpoint.put.v1',
  GET_ENDPOINT: 'webhook-dispatcher.endpoint.get.v1',
  SEND_TEST: 'webhook-dispatcher.endpoint.test.v1',
  CATALOG: 'webhook-dispatcher.catalog.v1',
  LIST_DELIVERIES: 'webhook-dispatcher.deliveries.list.v1',
  GET_DELIVERY: 'webhook-dispatcher.deliveries.get.v1',
  RETRY_DELIVERY: 'webhook-dispatcher.deliveries.retry.v1',
  /** The API got the PUT's reply: the secret it carries is handed over (decision 0448). */
  ACK_SECRET: 'webhook-dispatcher.endpoint.secret-ack.v1',
} as const;

export const deliveryStatus = z.enum(['pending', 'delivered', 'failed', 'dead']);
export type DeliveryStatus = z.infer<typeof deliveryStatus>;

const scope = { tenantId: z.string().min(1), source: webhookSource };

export const MAX_PAGE_SIZE = 200;

/** Partner request bodies and queries (the same for both APIs). */
export const putEndpointBody = z.object({
  url: z.string().min(1).max(2048),
  subscribedEventTypes: z
    // No event type is that long: a longer name is refused as such, never echoed back (decision 0497).
    .array(z.string().min(1).max(100))
    .min(
      1,
      'must name at least one event type; send null or leave it out to receive every type (decision 0477)',
    )
    .max(100)
    .nullable()
    .optional()
    .describe(
      'Event types to receive; null or absent: every type of the catalog. An empty list is a 400 (decision 0477).',
    ),
});
export const listDeliveriesQuery = z.object({
  // The bounds first, each stopping the checks: a huge number is one message, `must be at most 200` (it was two,
  // the safe-integer bound of `.int()` too; decision 0495).
  pageSize: z.coerce.number().min(1, { abort: true }).max(MAX_PAGE_SIZE, { abort: true }).int().default(20),
  cursor: z.string().min(1).optional(),
  status: deliveryStatus.optional(),
});

/**
 * `putId`: the API's id for this partner request. A secret the PUT stores stays unacknowledged until the API
 * acknowledges it with the same id (ACK_SECRET); a repeat PUT rotates an unacknowledged secret again (decision
 * 0448). Without it (an older caller) the secret counts as handed over at once.
 */
export const putEndpointRequest = z.object({ ...scope, body: putEndpointBody, putId: z.uuid().optional() });
export const ackSecretRequest = z.object({ ...scope, putId: z.uuid() });
/** Whether the stored secret is still the one this PUT generated (false: a later PUT replaced it). */
export const ackSecretReply = z.object({ acknowledged: z.boolean() });
export const scopeRequest = z.object(scope);
export const listDeliveriesRequest = z.object({ ...scope, query: listDeliveriesQuery });
export const deliveryRequest = z.object({ ...scope, id: z.string() });

export const webhookConfiguration = z.object({
  url: z.string().nullable(),
  signingSecret: z.string().nullable(),
  subscribedEventTypes: z.array(z.string()).nullable(),
  isConfigured: z.boolean(),
});
export type WebhookConfiguration = z.infer<typeof webhookConfiguration>;

export const deliveryAttempt = z.object({
  id: z.string(),
  attemptNumber: z.number().int(),
  requestUrl: z.string(),
  httpStatusCode: z
    .number()
    .int()
    .nullable()
    .describe(
      "The receiver's HTTP status. null when no HTTP answer came: connection or TLS failure, DNS failure, the 5 s timeout, a host refused by the URL check, or the endpoint no longer configured",
    ),
  responseBody: z
    .string()
    .nullable()
    .describe('The first bytes of the answer (2 KiB by default); null when no HTTP answer came'),
  errorMessage: z
    .string()
    .nullable()
    .describe(
      'Why the attempt failed (`HTTP 503`, a network error, `target refused: …`); null on a successful (2xx) attempt',
    ),
  durationMs: z.number().int(),
  attemptedAt: z.string(),
  success: z.boolean(),
});

export const deliverySummary = z.object({
  id: z.string(),
  eventId: z.string(),
  eventType: z.string(),
  entityType: z.string(),
  entityId: z.string(),
  /** The envelope's `sequence` (null only for events relayed before producers numbered their outbox). */
  sequence: z.number().int().nullable(),
  status: deliveryStatus,
  attemptCount: z.number().int(),
  lastAttemptAt: z.string().nullable(),
  nextAttemptAt: z.string().nullable(),
  createdAt: z.string(),
  deliveredAt: z.string().nullable(),
  lastError: z
    .string()
    .nullable()
    .describe(
      "The errorMessage of the latest attempt: null before the first attempt and once an attempt succeeded (every delivered delivery); a message while failed or dead. A retry keeps it until the fresh cycle's first attempt",
    ),
});
export const deliveryDetail = deliverySummary.extend({
  payload: z.string(),
  attempts: z.array(deliveryAttempt),
});
export type DeliveryDetail = z.infer<typeof deliveryDetail>;

export const deliveryPage = z.object({ items: z.array(deliverySummary), nextCursor: z.string().nullable() });

export const catalogReply = z.array(
  z.object({
    eventType: z.string(),
    entityType: z.string(),
    description: z.string(),
    dataSchema: z.unknown(),
    /** JSON Schema of the envelope around `data`, `sequence` included. */
    envelopeSchema: z.unknown(),
  }),
);

export const testDeliveryReply = z.object({
  deliveryId: z.string(),
  eventId: z.string(),
  status: deliveryStatus,
});

/** Every RPC reply: the result, or an error the API maps to its HTTP status and error shape. */
export const rpcError = z.object({
  status: z.number().int(),
  message: z.string(),
  errors: z.record(z.string(), z.array(z.string())).optional(),
});
export type RpcError = z.infer<typeof rpcError>;

export const rpcResult = <S extends z.ZodType>(ok: S) =>
  z.union([
    z.object({ ok: z.literal(true), result: ok }),
    z.object({ ok: z.literal(false), error: rpcError }),
  ]);
