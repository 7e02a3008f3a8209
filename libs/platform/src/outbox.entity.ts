import { Column, CreateDateColumn, Entity, Index, PrimaryColumn } from 'typeorm';

/**
 * A partner event written in the same transaction as the state change that caused it
 * (ARCHITECTURE.md, "Transactional outbox"). Each producing service has this table in its own schema;
 * a relay moves committed rows to the webhook.events queue and stamps `relayedAt`, and deletes relayed rows
 * after OUTBOX_RETENTION_HOURS (OutboxRetention migration).
 */
@Entity({ name: 'outbox' })
@Index('outbox_unrelayed_idx', ['createdAt'], { where: '"relayed_at" IS NULL' })
@Index('outbox_relayed_idx', ['relayedAt'], { where: '"relayed_at" IS NOT NULL' })
export class OutboxEventEntity {
  @PrimaryColumn('uuid')
  id: string;

  @Column('text', { name: 'tenant_id' })
  tenantId: string;

  @Column('text', { name: 'event_type' })
  eventType: string;

  @Column('text', { name: 'entity_type' })
  entityType: string;

  @Column('text', { name: 'entity_id' })
  entityId: string;

  /**
   * Gap-free per (tenantId, entityType, entityId), set by the table's trigger at insert (OutboxSequence
   * migration, decision 0225); bigint, so TypeORM reads it as a string.
   */
  @Column('bigint')
  sequence: string;

  @Column('jsonb')
  data: Record<string, unknown>;

  @Column('timestamptz', { name: 'occurred_at' })
  occurredAt: Date;

  @CreateDateColumn({ type: 'timestamptz', name: 'created_at' })
  createdAt: Date;

  @Column('timestamptz', { name: 'relayed_at', nullable: true })
  relayedAt: Date | null;
}

/** The last `sequence` given to each (tenant, entity type, entity id); written only by the outbox trigger. */
@Entity({ name: 'outbox_sequence' })
export class OutboxSequenceEntity {
  @PrimaryColumn('text', { name: 'tenant_id', primaryKeyConstraintName: 'outbox_sequence_pk' })
  tenantId: string;

  @PrimaryColumn('text', { name: 'entity_type', primaryKeyConstraintName: 'outbox_sequence_pk' })
  entityType: string;

  @PrimaryColumn('text', { name: 'entity_id', primaryKeyConstraintName: 'outbox_sequence_pk' })
  entityId: string;

  @Column('bigint', { name: 'last_sequence' })
  lastSequence: string;
}
