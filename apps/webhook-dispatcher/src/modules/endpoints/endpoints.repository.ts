import { Injectable } from '@nestjs/common';
import { type PreparedQuery, preparedQuery } from '@tessera/platform';
import { DataSource, In } from 'typeorm';
import { WebhookEndpointEntity } from './entities/webhook-endpoint.entity';

/** A PUT keeps the stored secret: same URL, a secret, and that secret acknowledged (decision 0448). */
const KEEPS_SECRET = `webhook_endpoints.url = EXCLUDED.url AND webhook_endpoints.secret_sealed <> ''
  AND webhook_endpoints.secret_acknowledged`;

@Injectable()
export class EndpointsRepository {
  private readonly prepared: PreparedQuery;

  constructor(private readonly dataSource: DataSource) {
    this.prepared = preparedQuery(dataSource);
  }

  find(tenantId: string, source: string): Promise<WebhookEndpointEntity | null> {
    return this.dataSource.getRepository(WebhookEndpointEntity).findOneBy({ tenantId, source });
  }

  findById(id: string): Promise<WebhookEndpointEntity | null> {
    return this.dataSource.getRepository(WebhookEndpointEntity).findOneBy({ id });
  }

  findByIds(ids: string[]): Promise<WebhookEndpointEntity[]> {
    return this.dataSource.getRepository(WebhookEndpointEntity).findBy({ id: In(ids) });
  }

  /**
   * Inserts or replaces the (tenant, source) endpoint. `candidateSealed` (a fresh secret) is stored when the
   * endpoint is new, its URL changes, it has no secret, or its secret was never acknowledged (the reply of the
   * PUT that stored it may have been lost on the way to the partner, decision 0448); otherwise the stored one is
   * kept. The decision is taken in the statement, under the row lock that INSERT … ON CONFLICT takes, so
   * concurrent PUTs (two replicas, two partner calls) serialise: `rotated` says whether this call's candidate is
   * what is stored now, i.e. whether its secret may be returned (contract: only by the request that generates
   * it). A candidate stored with a `putId` waits for `acknowledge`; without one it counts as handed over.
   */
  async upsert(
    tenantId: string,
    source: string,
    url: string,
    candidateSealed: string,
    subscribedEventTypes: string[] | null,
    putId: string | null,
  ): Promise<{ endpoint: WebhookEndpointEntity; rotated: boolean }> {
    const rows: { id: string; rotated: boolean }[] = await this.dataSource.query(
      `INSERT INTO webhook_endpoints
         (tenant_id, source, url, secret_sealed, subscribed_event_types, secret_put_id, secret_acknowledged)
       VALUES ($1, $2, $3, $4, $5::jsonb, $6::uuid, $6::uuid IS NULL)
       ON CONFLICT (tenant_id, source) DO UPDATE SET
         url = EXCLUDED.url,
         secret_sealed = CASE WHEN ${KEEPS_SECRET} THEN webhook_endpoints.secret_sealed ELSE EXCLUDED.secret_sealed END,
         secret_put_id = CASE WHEN ${KEEPS_SECRET} THEN webhook_endpoints.secret_put_id ELSE EXCLUDED.secret_put_id END,
         secret_acknowledged = CASE WHEN ${KEEPS_SECRET} THEN webhook_endpoints.secret_acknowledged
                                    ELSE EXCLUDED.secret_acknowledged END,
         subscribed_event_types = EXCLUDED.subscribed_event_types,
         updated_at = now()
       RETURNING id, secret_sealed = $4 AS rotated`,
      [tenantId, source, url, candidateSealed, JSON.stringify(subscribedEventTypes), putId],
    );
    return { endpoint: (await this.findById(rows[0]!.id))!, rotated: rows[0]!.rotated };
  }

  /**
   * The API got the reply of PUT `putId`: its secret, if it is still the stored one, is handed over, and a
   * repeat PUT with the same URL keeps it. False when a later PUT replaced it. Idempotent.
   */
  async acknowledge(tenantId: string, source: string, putId: string): Promise<boolean> {
    const rows = await this.prepared<{ id: string }>(
      'webhooks_acknowledge_secret',
      `UPDATE webhook_endpoints SET secret_acknowledged = true
        WHERE tenant_id = $1 AND source = $2 AND secret_put_id = $3::uuid RETURNING id`,
      [tenantId, source, putId],
    );
    return rows.length > 0;
  }
}
