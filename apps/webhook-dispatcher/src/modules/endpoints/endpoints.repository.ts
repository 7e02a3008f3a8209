import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { WebhookEndpointEntity } from './entities/webhook-endpoint.entity';

@Injectable()
export class EndpointsRepository {
  constructor(private readonly dataSource: DataSource) {}

  find(tenantId: string, source: string): Promise<WebhookEndpointEntity | null> {
    return this.dataSource.getRepository(WebhookEndpointEntity).findOneBy({ tenantId, source });
  }

  findById(id: string): Promise<WebhookEndpointEntity | null> {
    return this.dataSource.getRepository(WebhookEndpointEntity).findOneBy({ id });
  }

  /** Inserts or replaces the (tenant, source) endpoint; `secretSealed` null keeps the stored secret. */
  async upsert(
    tenantId: string,
    source: string,
    url: string,
    secretSealed: string | null,
    subscribedEventTypes: string[] | null,
  ): Promise<WebhookEndpointEntity> {
    const rows: { id: string }[] = await this.dataSource.query(
      `INSERT INTO webhook_endpoints (tenant_id, source, url, secret_sealed, subscribed_event_types)
       VALUES ($1, $2, $3, $4, $5::jsonb)
       ON CONFLICT (tenant_id, source) DO UPDATE SET
         url = EXCLUDED.url,
         secret_sealed = COALESCE($6, webhook_endpoints.secret_sealed),
         subscribed_event_types = EXCLUDED.subscribed_event_types,
         updated_at = now()
       RETURNING id`,
      [tenantId, source, url, secretSealed ?? '', JSON.stringify(subscribedEventTypes), secretSealed],
    );
    return (await this.findById(rows[0]!.id))!;
  }
}
