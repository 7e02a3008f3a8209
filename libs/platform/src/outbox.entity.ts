import { Column, CreateDateColumn, Entity, Index, PrimaryColumn } from 'typeorm';

/**
 * A partner event written in the same transaction as the state change that caused it
 * (ARCHITECTURE.md, "Transactional outbox"). Each producing service has this table in its own schema. A row is
 * written once: a trigger queues its id in `outbox_pending`, a relay moves committed rows to the webhook.events
 * queue and takes them off that queue, and rows past OUTBOX_RETENTION_HOURS are deleted (decision 0427).
 */
@Entity({ name: 'outbox' })
@Index('outbox_created_idx', ['createdAt'])
// Empty since decision 0427 (relayed_at is set at insert); kept one release for relays of the previous one.
@Index('outbox_unrelayed_idx', ['createdAt'], { where: '"relayed_at" IS NULL' })
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

  /**
   * Unused since decision 0427, which queues unrelayed rows in `outbox_pending`: the insert time, so that a
   * relay of the previous release (claiming `relayed_at IS NULL`) finds nothing during a rolling deploy.
   * Dropped in a later release.
   */
  @Column('timestamptz', { name: 'relayed_at', nullable: true, default: () => 'now()' })
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
