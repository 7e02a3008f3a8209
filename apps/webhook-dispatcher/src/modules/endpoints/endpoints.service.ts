import { Inject, Injectable } from '@nestjs/common';
import { generateWebhookSecret, SecretBox } from '@tessera/auth';
import {
  isSubscribable,
  publicCatalog,
  type WebhookConfiguration,
  type WebhookSource,
  type putEndpointBody,
} from '@tessera/contracts';
import { APP_CONFIG, badRequest, TtlCache } from '@tessera/platform';
import type { z } from 'zod';
import type { Env } from '../../config/env';
import { EgressGuard, TargetRefusedError } from '../deliveries/egress-guard';
import { EndpointsRepository } from './endpoints.repository';
import { urlFormRefusal } from './url-form';
import type { WebhookEndpointEntity } from './entities/webhook-endpoint.entity';

export interface ActiveEndpoint {
  id: string;
  tenantId: string;
  source: string;
  url: string;
  secret: string;
  subscribedEventTypes: string[] | null;
}

const CACHE_MS = 1000;
/** How many unknown event types a refusal names; the rest are counted. */
const UNKNOWN_TYPES_NAMED = 5;

/** Partner endpoint configuration: URL rules, secret generation and rotation, subscriptions. */
@Injectable()
export class EndpointsService {
  private readonly box: SecretBox;
  /** The arrival path's endpoints, one second per replica (docs/webhooks.md); a PUT here drops its entry. */
  private readonly cache = new TtlCache<Promise<ActiveEndpoint | null>>(CACHE_MS);

  constructor(
    private readonly endpoints: EndpointsRepository,
    private readonly guard: EgressGuard,
    @Inject(APP_CONFIG) env: Env,
  ) {
    if (!env.SECRETS_MASTER_KEY) throw new Error('SECRETS_MASTER_KEY is required by webhook-dispatcher');
    this.box = new SecretBox(env.SECRETS_MASTER_KEY, 'webhook-signing-secret');
  }

  private aad(tenantId: string, source: string): string {
    return `${tenantId}:${source}`;
  }

  async put(
    tenantId: string,
    source: WebhookSource,
    body: z.infer<typeof putEndpointBody>,
    putId: string | null = null,
  ): Promise<WebhookConfiguration> {
    const formRefusal = urlFormRefusal(body.url);
    if (formRefusal) throw badRequest('Invalid webhook URL', { url: [formRefusal] });
    try {
      await this.guard.vet(body.url);
    } catch (err) {
      if (err instanceof TargetRefusedError) throw badRequest('Invalid webhook URL', { url: [err.message] });
      throw err;
    }
    const types = body.subscribedEventTypes ?? null;
    const unknown = (types ?? []).filter((t) => !isSubscribable(source, t));
    if (unknown.length > 0) {
      // Named up to five, then counted: a refusal does not echo back a hundred names (decision 0495).
      const named = unknown.slice(0, UNKNOWN_TYPES_NAMED).map((t) => `unknown event type: ${t}`);
      const more = unknown.length - named.length;
      throw badRequest('Unknown event types', {
        subscribedEventTypes: more > 0 ? [...named, `and ${more} more unknown event types`] : named,
      });
    }
    // A candidate secret every time: the upsert keeps the stored one when the URL is unchanged and that secret
    // was acknowledged, and says whether it stored this one, atomically (two PUTs at once cannot both believe
    // they rotated). A secret whose PUT reply was never acknowledged is replaced (decision 0448).
    const secret = generateWebhookSecret();
    const { endpoint, rotated } = await this.endpoints.upsert(
      tenantId,
      source,
      body.url,
      this.box.seal(secret, this.aad(tenantId, source)),
      types ? [...new Set(types)] : null,
      putId,
    );
    this.cache.delete(this.aad(tenantId, source));
    return this.view(endpoint, rotated ? secret : null);
  }

  /** The API got the reply of PUT `putId` (decision 0448); see EndpointsRepository.acknowledge. */
  async acknowledge(tenantId: string, source: WebhookSource, putId: string) {
    return { acknowledged: await this.endpoints.acknowledge(tenantId, source, putId) };
  }

  async get(tenantId: string, source: WebhookSource): Promise<WebhookConfiguration> {
    return this.view(await this.endpoints.find(tenantId, source), null);
  }

  catalog(source: WebhookSource) {
    return publicCatalog(source);
  }

  /**
   * The endpoint with its secret opened, for signing; cached briefly (a PUT here clears it). The cache holds
   * the lookup itself, so the events of a batch that all miss at once share one query.
   */
  active(tenantId: string, source: string): Promise<ActiveEndpoint | null> {
    const key = this.aad(tenantId, source);
    const hit = this.cache.get(key);
    if (hit) return hit;
    const value = this.endpoints.find(tenantId, source).then((row) => (row ? this.open(row) : null));
    this.cache.set(key, value);
    // A failed lookup is not remembered: the next caller asks again.
    value.catch(() => {
      if (this.cache.get(key) === value) this.cache.delete(key);
    });
    return value;
  }

  /**
   * The endpoint as stored now, not as this replica cached it: for a partner's test delivery, which may follow a
   * PUT another replica served by milliseconds (the cache would send it to the old URL with the old secret).
   */
  async current(tenantId: string, source: string): Promise<ActiveEndpoint | null> {
    const row = await this.endpoints.find(tenantId, source);
    return row ? this.open(row) : null;
  }

  /**
   * The poller's lookup, one query for the endpoints of a claim, each secret opened once: the rows it reads are
   * the current ones, so they are used rather than the cache. An id with no row is absent from the answer.
   */
  async activeByIds(ids: string[]): Promise<Map<string, ActiveEndpoint>> {
    const rows = await this.endpoints.findByIds(ids);
    return new Map(rows.map((row) => [row.id, this.open(row)]));
  }

  private open(row: WebhookEndpointEntity): ActiveEndpoint {
    return {
      id: row.id,
      tenantId: row.tenantId,
      source: row.source,
      url: row.url,
      secret: this.box.openText(row.secretSealed, this.aad(row.tenantId, row.source)),
      subscribedEventTypes: row.subscribedEventTypes,
    };
  }

  private view(row: WebhookEndpointEntity | null, secret: string | null): WebhookConfiguration {
    return {
      url: row?.url ?? null,
      signingSecret: secret,
      subscribedEventTypes: row?.subscribedEventTypes ?? null,
      isConfigured: Boolean(row?.url && row.secretSealed),
    };
  }
}
