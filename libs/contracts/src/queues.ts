/** Every BullMQ queue in Tessera. Names are stable: renaming one strands its jobs. */
export const QUEUES = {
  /** Partner events relayed from each service's outbox, consumed by webhook-dispatcher. */
  WEBHOOK_EVENTS: 'webhook.events',
} as const;

export type QueueName = (typeof QUEUES)[keyof typeof QUEUES];
