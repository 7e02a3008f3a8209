/** Every BullMQ queue in Tessera. Names are stable: renaming one strands its jobs. */
export const QUEUES = {
  /** Partner events relayed from each service's outbox, consumed by webhook-dispatcher. */
  WEBHOOK_EVENTS: 'webhook.events',
  /** Custody transaction state machine steps, consumed by the custody worker role. */
  CUSTODY_TRANSACTIONS: 'custody.transactions',
  /** Verification step checks and enrollment expiry, consumed by the verification worker role. */
  VERIFICATION_CHECKS: 'verification.checks',
} as const;

export type QueueName = (typeof QUEUES)[keyof typeof QUEUES];
