import type { SecureContext } from 'node:tls';
import { Inject, Injectable, Logger, type OnModuleDestroy } from '@nestjs/common';
import { webhookHeaders } from '@tessera/auth';
import {
  type DeliveryDetail,
  type DeliveryStatus,
  type WebhookEventPayload,
  type WebhookSource,
  WEBHOOK_TEST_EVENT,
  type listDeliveriesQuery,
  subscribesTo,
} from '@tessera/contracts';
import { APP_CONFIG, badRequest, conflict, forbidden, notFound, timeOrderedId } from '@tessera/platform';
import type { z } from 'zod';
import { endpointConcurrency, endpointRequestLimit, type Env, leaseMarginMs } from '../../config/env';
import { mayTakeOneMore } from './permits';
import { type ActiveEndpoint, EndpointsService } from '../endpoints/endpoints.service';
import { DeliveriesRepository, type ClaimedDelivery, type NewDelivery } from './deliveries.repository';
import { EgressGuard, TargetRefusedError } from './egress-guard';
import type { WebhookDeliveryEntity } from './entities/webhook-delivery.entity';
import { HttpSender } from './http-sender';
import { EndpointPermits, Permits } from './permits';
import { WebhookMetrics } from './webhook-metrics';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * The exact body of every attempt (stored once, so retries and re-queues resend it byte for byte): the
 * contract's five fields, then `sequence` (decision 0225) when the producer numbered the event.
 */
export function envelope(e: {
  eventType: string;
  entityType: string;
  entityId: string;
  sequence?: number;
  occurredAt: string;
  data: Record<string, unknown>;
}): string {
  return JSON.stringify({
    eventType: e.eventType,
    entityType: e.entityType,
    entityId: e.entityId,
    timestamp: new Date(e.occurredAt).toISOString(),
    data: e.data,
    ...(e.sequence !== undefined ? { sequence: e.sequence } : {}),
  });
}

/** The delivery of a relayed event to one endpoint, as it is stored. */
const newDelivery = (event: WebhookEventPayload, endpointId: string): NewDelivery => ({
  eventId: event.eventId,
  endpointId,
  tenantId: event.tenantId,
  source: event.source,
  eventType: event.eventType,
  entityType: event.entityType,
  entityId: event.entityId,
  sequence: event.sequence ?? null,
  payload: envelope(event),
  occurredAt: new Date(event.occurredAt),
});

/** What became of one relayed event. */
export interface HandledEvent {
  /** Its inbox row was written now (false: a redelivered event). */
  recorded: boolean;
  /** 'pending': left due for the poller, unsent (its endpoint is not keeping up, or its lease ran short). */
  delivery: 'skipped' | DeliveryStatus;
}

/** What became of a batch: counts by outcome (failed counts failed and dead first attempts). */
export interface HandledBatch {
  events: number;
  recorded: number;
  delivered: number;
  failed: number;
  skipped: number;
  /** Left due for the poller, unsent. */
  deferred: number;
}

/** Deliveries: one per (event, endpoint), attempted at once, then retried on schedule until dead. */
/**
 * The poller's last slots, kept for endpoints holding fewer than this many (decision 0478): WEBHOOK_CONCURRENCY
 * less one endpoint's cap, as the request permits keep theirs (decision 0472).
 */
export const pollerSlotReserve = (env: Env): number =>
  Math.max(0, env.WEBHOOK_CONCURRENCY - endpointConcurrency(env));

/**
 * Whether an endpoint with `held` of the poller's slots may take another while `free` are free (mayTakeOneMore
 * with the poller's cap and reserve). The poller claims again as soon as a slot frees while one may not.
 */
export const mayTakePollerSlot = (env: Env, held: number, free: number): boolean =>
  mayTakeOneMore(held, free, endpointConcurrency(env), pollerSlotReserve(env));

@Injectable()
export class DeliveriesService implements OnModuleDestroy {
  private readonly logger = new Logger(DeliveriesService.name);
  private readonly sender: HttpSender;
  /** Deliveries between their claim and the end of their request: twice the requests, so claims run ahead. */
  private readonly claims: Permits;
  /**
   * Requests to receivers in flight (WEBHOOK_CONCURRENCY), at most endpointRequestLimit of one endpoint; the rest
   * kept for the endpoints holding fewest, and a freed one handed to the waiting endpoint holding fewest (0472).
   */
  private readonly requests: EndpointPermits;
  /** How long before a claim's lease ends its request must be over (clock drift, the record's write). */
  private readonly leaseMarginMs: number;

  constructor(
    private readonly deliveries: DeliveriesRepository,
    private readonly endpoints: EndpointsService,
    private readonly guard: EgressGuard,
    private readonly metrics: WebhookMetrics,
    @Inject(APP_CONFIG) private readonly env: Env,
    @Inject('WEBHOOK_CA') secureContext: SecureContext | undefined,
  ) {
    this.claims = new Permits(2 * env.WEBHOOK_CONCURRENCY);
    this.requests = new EndpointPermits(
      env.WEBHOOK_CONCURRENCY,
      endpointRequestLimit(env),
      env.WEBHOOK_ENDPOINT_WAIT_MS,
    );
    this.leaseMarginMs = leaseMarginMs(env.WEBHOOK_LEASE_MS);
    this.sender = new HttpSender({
      timeoutMs: env.WEBHOOK_TIMEOUT_MS,
      responseBodyLimit: env.WEBHOOK_RESPONSE_BODY_LIMIT,
      secureContext,
    });
  }

  /**
   * A relayed event: records it in the inbox and, when the tenant's endpoint subscribes to it, creates its
   * delivery (claimed, in the same statement) and attempts it. 'skipped' means no delivery was created here (no
   * endpoint, not subscribed, or a redelivered event whose delivery exists; the poller finishes a delivery
   * whose first worker died). At most WEBHOOK_CONCURRENCY requests are in flight, and at most twice as many
   * deliveries are between their claim and the end of their request: the next claims are group-committed while
   * the current requests run, yet a claim waits for at most one round of requests (each bounded by
   * WEBHOOK_TIMEOUT_MS), far inside its lease, and a large batch never claims more than it is about to attempt.
   *
   * An endpoint that is not keeping up (one of its deliveries has waited WEBHOOK_ENDPOINT_WAIT_MS for a request
   * permit) gets its new deliveries created unclaimed and due: the poller sends them, at most
   * WEBHOOK_ENDPOINT_CONCURRENCY at a time, and the claims stay free for the other endpoints (decision 0463).
   */
  async handleEvent(event: WebhookEventPayload): Promise<HandledEvent> {
    const endpoint = await this.endpoints.active(event.tenantId, event.source);
    const subscribed =
      endpoint !== null && subscribesTo(event.source, endpoint.subscribedEventTypes, event.eventType);
    if (!subscribed) {
      const { recorded } = await this.deliveries.arrive({ inbox: event, delivery: null, leaseMs: 0 });
      return { recorded, delivery: 'skipped' };
    }
    if (this.requests.congested(endpoint.id)) return this.leaveDue(event, endpoint);
    const release = await this.claims.acquire();
    if (this.requests.congested(endpoint.id)) {
      release();
      return this.leaveDue(event, endpoint);
    }
    try {
      const { recorded, claimed } = await this.deliveries.arrive({
        inbox: event,
        delivery: newDelivery(event, endpoint.id),
        leaseMs: this.env.WEBHOOK_LEASE_MS,
      });
      if (!claimed) return { recorded, delivery: 'skipped' };
      // The permit is for the request: the next delivery starts while this attempt's record is written.
      return { recorded, delivery: await this.attempt(claimed, endpoint, release) };
    } finally {
      release();
    }
  }

  /** The event's delivery created unclaimed and due now, for the poller (its claim would only wait). */
  private async leaveDue(event: WebhookEventPayload, endpoint: ActiveEndpoint): Promise<HandledEvent> {
    const { recorded, claimed } = await this.deliveries.arrive({
      inbox: event,
      delivery: newDelivery(event, endpoint.id),
      leaseMs: 0,
    });
    if (!claimed) return { recorded, delivery: 'skipped' }; // a redelivered event: its delivery exists
    this.metrics.deferred.inc();
    return { recorded, delivery: 'pending' };
  }

  /**
   * A batch of relayed events (one `webhook.events.v1` job): each handled as above, all at once. The job
   * settles only when every event has: a failure fails the job, and its retry redoes only what is missing.
   */
  async handleEvents(events: WebhookEventPayload[]): Promise<HandledBatch> {
    const results = await Promise.allSettled(events.map((e) => this.handleEvent(e)));
    const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) throw failed.reason;
    const counts: HandledBatch = {
      events: events.length,
      recorded: 0,
      delivered: 0,
      failed: 0,
      skipped: 0,
      deferred: 0,
    };
    for (const r of results as PromiseFulfilledResult<HandledEvent>[]) {
      if (r.value.recorded) counts.recorded += 1;
      if (r.value.delivery === 'delivered' || r.value.delivery === 'skipped') counts[r.value.delivery] += 1;
      else if (r.value.delivery === 'pending') counts.deferred += 1;
      else counts.failed += 1;
    }
    return counts;
  }

  /**
   * The poller's claim: due retries, re-queues and abandoned claims, at most `limit`, and at most
   * WEBHOOK_ENDPOINT_CONCURRENCY of one endpoint counting the `busy` ones already in flight here (decision 0455).
   * Each endpoint of the claim is read, and its secret opened, once. Answers each claimed delivery's endpoint and
   * its attempt, started at once: each settles when its own attempt is recorded, whatever the others do.
   */
  async claimDue(
    limit: number,
    busy: ReadonlyMap<string, number>,
  ): Promise<{ endpointId: string; attempt: Promise<DeliveryStatus> }[]> {
    const batch = await this.deliveries.claimDue(
      limit,
      this.env.WEBHOOK_LEASE_MS,
      endpointConcurrency(this.env),
      busy,
      pollerSlotReserve(this.env),
    );
    if (batch.length === 0) return [];
    const endpoints = await this.endpoints.activeByIds([...new Set(batch.map((c) => c.endpointId))]);
    return batch.map((claimed) => ({
      endpointId: claimed.endpointId,
      attempt: this.attempt(claimed, endpoints.get(claimed.endpointId) ?? null),
    }));
  }

  private retryDelayMs(failedAttemptsInCycle: number): number {
    const schedule = this.env.WEBHOOK_RETRY_SCHEDULE_MS;
    const base = schedule[Math.min(failedAttemptsInCycle - 1, schedule.length - 1)]!;
    const jitter = 1 + this.env.WEBHOOK_JITTER * (2 * Math.random() - 1);
    return Math.max(0, Math.round(base * this.env.WEBHOOK_TIME_SCALE * jitter));
  }

  /**
   * One attempt: fresh DNS check, signed POST (holding one of the WEBHOOK_CONCURRENCY request permits, at most
   * endpointRequestLimit of them per endpoint), then the attempt row and the new state in one statement.
   */
  async attempt(
    claimed: ClaimedDelivery,
    endpoint: ActiveEndpoint | null,
    /**
     * First attempts (the arrival path) only: called once the request is over (answered, failed or refused),
     * before the attempt is recorded. Their wait for a request permit is bounded (decision 0463).
     */
    sent?: () => void,
  ): Promise<DeliveryStatus> {
    // A first attempt (`sent` given) waits a bounded time for its endpoint's permit, then leaves the delivery
    // due for the poller; the poller's attempts wait their turn (decision 0463).
    const request = endpoint
      ? await this.requests.acquire(endpoint.id, sent ? this.env.WEBHOOK_ENDPOINT_WAIT_MS : undefined)
      : () => undefined;
    if (!request) {
      sent?.();
      await this.deliveries.release(claimed);
      this.metrics.deferred.inc();
      return 'pending';
    }
    const attemptedAt = new Date();
    const number = claimed.attemptCount + 1;
    if (number === 1)
      this.metrics.outboxLag.observe((attemptedAt.getTime() - new Date(claimed.occurredAt).getTime()) / 1000);
    let result;
    let refused = false;
    if (!endpoint) {
      refused = true;
      result = {
        statusCode: null,
        responseBody: null,
        errorMessage: 'endpoint no longer configured',
        durationMs: 0,
        success: false,
      };
    } else {
      try {
        // One deadline for the whole attempt, the contract's "5 s timeout per attempt": the DNS check and the
        // request share WEBHOOK_TIMEOUT_MS (decision 0497); they had one each.
        const deadline = Date.now() + this.env.WEBHOOK_TIMEOUT_MS;
        const target = await this.guard.vet(endpoint.url, this.env.WEBHOOK_TIMEOUT_MS);
        const headers: Record<string, string> = webhookHeaders(
          endpoint.secret,
          claimed.eventId,
          Math.floor(attemptedAt.getTime() / 1000),
          claimed.payload,
        );
        // Set on the fresh object, not spread into a copy: a property added after a spread is slow on
        // Node 20 (decision 0422).
        headers['user-agent'] = 'Tessera-Webhooks/1.0';
        // No request of this claim may run past its lease: another worker would then take the delivery over
        // and POST it beside this one (decision 0452). When the wait for a request permit and DNS left too
        // little of it, the claim goes back, due now, and nothing is sent (`result` stays unset).
        const budget = claimed.leaseDeadline - this.leaseMarginMs - Date.now();
        if (budget >= Math.min(this.env.WEBHOOK_TIMEOUT_MS, this.env.WEBHOOK_LEASE_MS / 2)) {
          const bound = Math.min(this.env.WEBHOOK_TIMEOUT_MS, Math.floor(budget));
          const left = Math.max(1, Math.min(bound, deadline - Date.now()));
          result = await this.sender.post(target, headers, claimed.payload, left, bound);
        }
      } catch (err) {
        if (!(err instanceof TargetRefusedError)) throw err;
        // A host that resolves to a non-public address is dead at once; a DNS failure is retried.
        refused = !err.transient;
        result = {
          statusCode: null,
          responseBody: null,
          errorMessage: `target refused: ${err.message}`,
          durationMs: 0,
          success: false,
        };
      } finally {
        request();
      }
    }
    sent?.();
    if (!result) {
      await this.deliveries.release(claimed);
      this.logger.warn(
        { deliveryId: claimed.id },
        'webhook claim given back unsent: its lease was nearly over',
      );
      return 'pending';
    }
    const inCycle = number - claimed.attemptBase;
    const status: DeliveryStatus = result.success
      ? 'delivered'
      : refused || inCycle >= this.env.WEBHOOK_MAX_ATTEMPTS
        ? 'dead'
        : 'failed';
    const nextAttemptAt = status === 'failed' ? new Date(Date.now() + this.retryDelayMs(inCycle)) : null;
    await this.deliveries.recordAttempt(
      claimed,
      {
        requestUrl: endpoint?.url ?? '',
        httpStatusCode: result.statusCode,
        responseBody: result.responseBody,
        errorMessage: result.errorMessage,
        durationMs: result.durationMs,
        attemptedAt,
        success: result.success,
      },
      { status, nextAttemptAt, lastError: result.errorMessage },
    );
    this.metrics.deliveries.inc({ outcome: status });
    this.metrics.attemptLatency.observe({ outcome: status }, result.durationMs / 1000);
    if (status === 'dead')
      this.logger.warn({ deliveryId: claimed.id, error: result.errorMessage }, 'webhook delivery dead');
    return status;
  }

  async sendTest(tenantId: string, source: WebhookSource) {
    const endpoint = await this.endpoints.current(tenantId, source);
    if (!endpoint) throw conflict('Webhook endpoint is not configured');
    const eventId = timeOrderedId();
    const occurredAt = new Date().toISOString();
    const claimed = await this.deliveries.insertClaimed(
      {
        eventId,
        endpointId: endpoint.id,
        tenantId,
        source,
        eventType: WEBHOOK_TEST_EVENT,
        entityType: 'webhook',
        entityId: eventId,
        // A test event is its own entity: the first and only event of its sequence.
        sequence: 1,
        payload: envelope({
          eventType: WEBHOOK_TEST_EVENT,
          entityType: 'webhook',
          entityId: eventId,
          sequence: 1,
          occurredAt,
          data: { message: 'This is a test event from Tessera.', sentAt: occurredAt },
        }),
        occurredAt: new Date(occurredAt),
      },
      this.env.WEBHOOK_LEASE_MS,
    );
    // Held to its endpoint's permit wait as a first attempt is (decision 0495): behind busy attempts to the same
    // endpoint it answers `pending` and the poller sends it, instead of outlasting the API's RPC wait (10 s).
    const status = await this.attempt(claimed!, endpoint, () => undefined);
    return { deliveryId: claimed!.id, eventId, status };
  }

  async list(tenantId: string, source: WebhookSource, query: z.infer<typeof listDeliveriesQuery>) {
    if (query.cursor && !UUID.test(query.cursor))
      throw badRequest('Invalid cursor', { cursor: ['invalid cursor'] });
    const rows = await this.deliveries.list(tenantId, source, query);
    if (rows === 'bad-cursor') throw badRequest('Invalid cursor', { cursor: ['invalid cursor'] });
    const page = rows.slice(0, query.pageSize);
    return {
      items: page.map((r) => this.summary(r)),
      nextCursor: rows.length > query.pageSize ? page[page.length - 1]!.id : null,
    };
  }

  async get(tenantId: string, source: WebhookSource, id: string): Promise<DeliveryDetail> {
    const row = UUID.test(id) ? await this.deliveries.find(tenantId, source, id) : null;
    if (!row) return this.notTheTenants(source, id);
    const attempts = await this.deliveries.attempts(row.id);
    return {
      ...this.summary(row),
      payload: row.payload,
      attempts: attempts.map((a) => ({
        id: a.id,
        attemptNumber: a.attemptNumber,
        requestUrl: a.requestUrl,
        httpStatusCode: a.httpStatusCode,
        responseBody: a.responseBody,
        errorMessage: a.errorMessage,
        durationMs: a.durationMs,
        attemptedAt: a.attemptedAt.toISOString(),
        success: a.success,
      })),
    };
  }

  async retry(tenantId: string, source: WebhookSource, id: string): Promise<DeliveryDetail> {
    const row = UUID.test(id) ? await this.deliveries.find(tenantId, source, id) : null;
    if (!row) return this.notTheTenants(source, id);
    const requeued = await this.deliveries.requeue(tenantId, source, id);
    if (!requeued) throw conflict(`Only failed or dead deliveries can be retried; this one is ${row.status}`);
    return this.get(tenantId, source, id);
  }

  /**
   * A delivery the tenant does not have. The verification contract answers a valid credential that touches a
   * resource of another product with 403, as for applicants (decision 0495): a delivery of another verification
   * product is 403, which says only that the id is taken. Custody's contract wants 404 for another tenant's
   * resource; an id of the other API, or of no one, is 404 to both.
   */
  private async notTheTenants(source: WebhookSource, id: string): Promise<never> {
    if (source === 'verification' && UUID.test(id) && (await this.deliveries.exists(source, id)))
      throw forbidden('Delivery belongs to another product');
    throw notFound('Delivery not found');
  }

  private summary(r: WebhookDeliveryEntity) {
    return {
      id: r.id,
      eventId: r.eventId,
      eventType: r.eventType,
      entityType: r.entityType,
      entityId: r.entityId,
      sequence: r.sequence === null ? null : Number(r.sequence),
      status: r.status as DeliveryStatus,
      attemptCount: r.attemptCount,
      lastAttemptAt: r.lastAttemptAt?.toISOString() ?? null,
      nextAttemptAt:
        r.nextAttemptAt && (r.status === 'pending' || r.status === 'failed')
          ? r.nextAttemptAt.toISOString()
          : null,
      createdAt: r.createdAt.toISOString(),
      deliveredAt: r.deliveredAt?.toISOString() ?? null,
      lastError: r.lastError,
    };
  }

  async onModuleDestroy(): Promise<void> {
    await this.sender.close();
  }
}
