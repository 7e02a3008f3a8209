import { Check, Column, CreateDateColumn, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';

/**
 * One event for one endpoint. (event_id, endpoint_id) is unique, so a redelivered job or a replayed relay
 * never creates a second delivery. `next_attempt_at` is both the retry time and the claim lease. Finished
 * deliveries older than WEBHOOK_DELIVERY_RETENTION_DAYS are deleted with their attempts (DeliveryRetention,
 * decision 0433).
 */
@Entity({ name: 'webhook_deliveries' })
@Index('webhook_deliveries_event_endpoint_uq', ['eventId', 'endpointId'], { unique: true })
@Index('webhook_deliveries_due_idx', ['nextAttemptAt'], { where: `"status" IN ('pending', 'failed')` })
@Index('webhook_deliveries_list_idx', ['tenantId', 'source', 'createdAt', 'id'])
@Index('webhook_deliveries_finished_idx', ['createdAt'], { where: `"status" IN ('delivered', 'dead')` })
@Check('webhook_deliveries_status_ck', `"status" IN ('pending', 'delivered', 'failed', 'dead')`)
export class WebhookDeliveryEntity {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column('uuid', { name: 'event_id' })
  eventId: string;

  @Column('uuid', { name: 'endpoint_id' })
  endpointId: string;

  @Column('text', { name: 'tenant_id' })
  tenantId: string;

  @Column('text')
  source: string;

  @Column('text', { name: 'event_type' })
  eventType: string;

  @Column('text', { name: 'entity_type' })
  entityType: string;

  @Column('text', { name: 'entity_id' })
  entityId: string;

  /** The envelope's `sequence` (decision 0225); null for events relayed before producers numbered them. */
  @Column('bigint', { nullable: true })
  sequence: string | null;

  /** The exact JSON body sent on every attempt. */
  @Column('text')
  payload: string;

  @Column('text', { default: 'pending' })
  status: string;

  @Column('int', { name: 'attempt_count', default: 0 })
  attemptCount: number;

  /** attempt_count when the current cycle began (0, or the count at a manual retry). */
  @Column('int', { name: 'attempt_base', default: 0 })
  attemptBase: number;

  @Column('timestamptz', { name: 'next_attempt_at', nullable: true })
  nextAttemptAt: Date | null;

  /** The end of the current claim; null when no worker holds the delivery (decision 0452). */
  @Column('timestamptz', { name: 'claimed_until', nullable: true })
  claimedUntil: Date | null;

  @Column('timestamptz', { name: 'last_attempt_at', nullable: true })
  lastAttemptAt: Date | null;

  @Column('timestamptz', { name: 'delivered_at', nullable: true })
  deliveredAt: Date | null;

  @Column('text', { name: 'last_error', nullable: true })
  lastError: string | null;

  /** When the producer committed the event (its outbox occurredAt), for the outbox-lag metric. */
  @Column('timestamptz', { name: 'occurred_at' })
  occurredAt: Date;

  @CreateDateColumn({ type: 'timestamptz', name: 'created_at' })
  createdAt: Date;
}
