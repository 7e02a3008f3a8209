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

  /**
   * Inserts or replaces the (tenant, source) endpoint. `candidateSealed` (a fresh secret) is stored when the
   * endpoint is new, its URL changes, or it has no secret; the stored one is kept when the URL is the same.
   * The decision is taken in the statement, under the row lock that INSERT … ON CONFLICT takes, so concurrent
   * PUTs (two replicas, two partner calls) serialise: `rotated` says whether this call's candidate is what is
   * stored now, i.e. whether its secret may be returned (contract: only by the request that generates it).
   */
  async upsert(
    tenantId: string,
    source: string,
    url: string,
    candidateSealed: string,
    subscribedEventTypes: string[] | null,
  ): Promise<{ endpoint: WebhookEndpointEntity; rotated: boolean }> {
    const rows: { id: string; rotated: boolean }[] = await this.dataSource.query(
      `INSERT INTO webhook_endpoints (tenant_id, source, url, secret_sealed, subscribed_event_types)
       VALUES ($1, $2, $3, $4, $5::jsonb)
       ON CONFLICT (tenant_id, source) DO UPDATE SET
         url = EXCLUDED.url,
         secret_sealed = CASE
           WHEN webhook_endpoints.url = EXCLUDED.url AND webhook_endpoints.secret_sealed <> ''
             THEN webhook_endpoints.secret_sealed
           ELSE EXCLUDED.secret_sealed END,
         subscribed_event_types = EXCLUDED.subscribed_event_types,
         updated_at = now()
       RETURNING id, secret_sealed = $4 AS rotated`,
      [tenantId, source, url, candidateSealed, JSON.stringify(subscribedEventTypes)],
    );
    return { endpoint: (await this.findById(rows[0]!.id))!, rotated: rows[0]!.rotated };
  }
}
