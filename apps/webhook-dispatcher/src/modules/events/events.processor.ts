import { Injectable } from '@nestjs/common';
import { JOBS, type WebhookEventPayload, type WebhookEventsPayload } from '@tessera/contracts';
import { ProcessJob } from '@tessera/platform';
import { DeliveriesService, type HandledBatch, type HandledEvent } from '../deliveries/deliveries.service';

/**
 * Consumes webhook.events: records each relayed event once in the inbox, then creates and attempts its
 * delivery, in the same statement. Both writes are idempotent, so a redelivered job changes nothing. Relays
 * enqueue batches (`webhook.events.v1`, decision 0402); a single event (`webhook.event.v1`) is still taken.
 */
@Injectable()
export class EventsProcessor {
  constructor(private readonly deliveries: DeliveriesService) {}

  @ProcessJob(JOBS.WEBHOOK_EVENT)
  receive(event: WebhookEventPayload): Promise<HandledEvent> {
    return this.deliveries.handleEvent(event);
  }

  @ProcessJob(JOBS.WEBHOOK_EVENTS)
  receiveMany(batch: WebhookEventsPayload): Promise<HandledBatch> {
    return this.deliveries.handleEvents(batch.events);
  }
}
