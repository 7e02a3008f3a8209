import { randomUUID } from 'node:crypto';
import type { EntityManager } from 'typeorm';
import { OutboxEventEntity } from './outbox.entity';
import { wakeOutboxRelayAfterCommit } from './outbox-wake';

export interface OutboxEvent {
  tenantId: string;
  eventType: string;
  entityType: string;
  entityId: string;
  data: Record<string, unknown>;
  occurredAt?: Date;
}

/**
 * Appends events inside the caller's transaction; nothing leaves before that transaction commits, and the
 * relay is woken when it does (outbox-wake.ts).
 */
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
  // The outbox table's trigger numbers each row per entity (OutboxSequence: gap-free, in this transaction).
  if (rows.length > 0) {
    await manager.insert(OutboxEventEntity, rows as never);
    wakeOutboxRelayAfterCommit(manager.connection, manager.queryRunner);
  }
  return rows.map((r) => r.id);
}
