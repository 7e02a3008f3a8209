import { Injectable } from '@nestjs/common';
import { JobQueues, MetricsService, withTimeout } from '@tessera/platform';
import { QUEUES } from '@tessera/contracts';
import { Counter, Gauge, Histogram } from 'prom-client';

/**
 * How long a scrape waits for the queue depth (decision 0491). The count is a BullMQ call on the queue
 * connection, which has no command timeout (decision 0484): while Redis hangs, GET /metrics waited with it.
 */
export const QUEUE_DEPTH_TIMEOUT_MS = 500;

@Injectable()
export class WebhookMetrics {
  readonly deliveries: Counter<'outcome'>;
  readonly attemptLatency: Histogram<'outcome'>;
  readonly outboxLag: Histogram;
  readonly deferred: Counter;

  constructor(metrics: MetricsService, queues: JobQueues) {
    const registers = [metrics.registry];
    this.deliveries = new Counter({
      name: 'webhook_delivery_attempts_total',
      help: 'Delivery attempts by outcome (delivered, failed, dead)',
      labelNames: ['outcome'],
      registers,
    });
    this.attemptLatency = new Histogram({
      name: 'webhook_attempt_duration_seconds',
      help: 'HTTP duration of delivery attempts',
      labelNames: ['outcome'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers,
    });
    this.deferred = new Counter({
      name: 'webhook_deliveries_deferred_total',
      help: 'First attempts left due for the poller, unsent: their endpoint was not keeping up (decision 0463)',
      registers,
    });
    this.outboxLag = new Histogram({
      name: 'webhook_outbox_lag_seconds',
      help: 'Time from the event commit in the producer outbox to the first delivery attempt',
      buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers,
    });
    new Gauge({
      name: 'webhook_events_queue_depth',
      help: 'Jobs waiting or delayed in the webhook.events queue (the last value read while Redis does not answer)',
      registers,
      async collect() {
        // Redis slow or away: the scrape answers with the last depth read, at most QUEUE_DEPTH_TIMEOUT_MS late.
        const depth = await withTimeout(
          queues.queue(QUEUES.WEBHOOK_EVENTS).count(),
          QUEUE_DEPTH_TIMEOUT_MS,
          'queue depth',
        ).catch(() => undefined);
        if (depth !== undefined) this.set(depth);
      },
    });
  }
}
