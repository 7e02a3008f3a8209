import { Injectable } from '@nestjs/common';
import type { WebhookEventPayload } from '@tessera/contracts';
import { DataSource } from 'typeorm';

@Injectable()
export class EventsRepository {
  constructor(private readonly dataSource: DataSource) {}

  /** Records the event unless it is already there; true when this call recorded it. */
  async recordOnce(event: WebhookEventPayload): Promise<boolean> {
    const rows: unknown[] = await this.dataSource.query(
      `INSERT INTO received_events (event_id, source, tenant_id, event_type, entity_type, entity_id, data, occurred_at, sequence)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
       ON CONFLICT (event_id) DO NOTHING
       RETURNING event_id`,
      [
        event.eventId,
        event.source,
        event.tenantId,
        event.eventType,
        event.entityType,
        event.entityId,
        JSON.stringify(event.data),
        event.occurredAt,
        event.sequence ?? null,
      ],
    );
    return rows.length > 0;
  }
}
