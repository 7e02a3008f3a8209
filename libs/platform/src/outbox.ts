import { randomUUID } from 'node:crypto';
import type { EntityManager } from 'typeorm';
import { OutboxEventEntity } from './outbox.entity';

export interface OutboxEvent {
  tenantId: string;
  eventType: string;
  entityType: string;
  entityId: string;
  data: Record<string, unknown>;
  occurredAt?: Date;
}

/**
 * The LISTEN/NOTIFY channel on which a schema's outbox announces new rows (delivered at commit).
 * Must match the trigger in OutboxNotifyTrigger: `tessera_outbox_` + the table's schema.
 */
export function outboxChannel(schema: string): string {
  return `tessera_outbox_${schema}`;
}

/** Appends events inside the caller's transaction; nothing leaves before that transaction commits. */
export async function appendToOutbox(manager: EntityManager, events: OutboxEvent[]): Promise<string[]> {
  const rows = events.map((event) => ({
    id: randomUUID(),
    tenantId: event.tenantId,
    eventType: event.eventType,
    entityType: event.entityType,
    entityId: event.entityId,
    data: event.data,
    occurredAt: event.occurredAt ?? new Date(),
  }));
  // The outbox table's triggers number each row per entity (OutboxSequence: gap-free, in this transaction)
  // and wake the relay when this transaction commits (OutboxNotifyTrigger).
  if (rows.length > 0) await manager.insert(OutboxEventEntity, rows as never);
  return rows.map((r) => r.id);
}
