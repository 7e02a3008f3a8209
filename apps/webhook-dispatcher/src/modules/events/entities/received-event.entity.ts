import { Column, CreateDateColumn, Entity, Index, PrimaryColumn } from 'typeorm';

/**
 * The dispatcher's inbox: each event relayed from a producer's outbox, once. The event id is the primary
 * key, so a redelivered job (BullMQ retry, relay replay) never creates a second row. Rows older than
 * WEBHOOK_INBOX_RETENTION_HOURS are deleted (InboxRetention, decision 0431).
 */
@Entity({ name: 'received_events' })
@Index('received_events_received_idx', ['receivedAt'])
export class ReceivedEventEntity {
  @PrimaryColumn('uuid', { name: 'event_id' })
  eventId: string;

  @Column('text')
  source: string;

  @Column('text', { name: 'tenant_id' })
  tenantId: string;

  @Column('text', { name: 'event_type' })
  eventType: string;

  @Column('text', { name: 'entity_type' })
  entityType: string;

  @Column('text', { name: 'entity_id' })
  entityId: string;

  /** Gap-free per (tenant, entityType, entityId) from the producer's outbox (decision 0225). */
  @Column('bigint', { nullable: true })
  sequence: string | null;

  @Column('jsonb')
  data: Record<string, unknown>;

  @Column('timestamptz', { name: 'occurred_at' })
  occurredAt: Date;

  @CreateDateColumn({ type: 'timestamptz', name: 'received_at' })
  receivedAt: Date;
}
