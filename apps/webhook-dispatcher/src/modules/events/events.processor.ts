import { Injectable } from '@nestjs/common';
import { JOBS, type WebhookEventPayload } from '@tessera/contracts';
import { ProcessJob } from '@tessera/platform';
import { DeliveriesService } from '../deliveries/deliveries.service';
import { EventsRepository } from './events.repository';

/**
 * Consumes webhook.events: records each relayed event once in the inbox, then creates and attempts its
 * delivery. Both writes are idempotent, so a redelivered job changes nothing.
 */
@Injectable()
export class EventsProcessor {
  constructor(
    private readonly events: EventsRepository,
    private readonly deliveries: DeliveriesService,
  ) {}

  @ProcessJob(JOBS.WEBHOOK_EVENT)
  async receive(event: WebhookEventPayload): Promise<{ recorded: boolean; delivery: string }> {
    // A created delivery records the inbox row in the same statement; otherwise the inbox alone.
    const delivery = await this.deliveries.handleEvent(event);
    const recorded = delivery === 'skipped' ? await this.events.recordOnce(event) : true;
    return { recorded, delivery };
  }
}
