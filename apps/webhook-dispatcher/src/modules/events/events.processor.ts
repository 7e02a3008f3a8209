import { Injectable } from '@nestjs/common';
import { JOBS, type WebhookEventPayload } from '@tessera/contracts';
import { ProcessJob } from '@tessera/platform';
import { EventsRepository } from './events.repository';

/** Consumes webhook.events: records each relayed event exactly once in the dispatcher's inbox. */
@Injectable()
export class EventsProcessor {
  constructor(private readonly events: EventsRepository) {}

  @ProcessJob(JOBS.WEBHOOK_EVENT)
  async receive(event: WebhookEventPayload): Promise<{ recorded: boolean }> {
    return { recorded: await this.events.recordOnce(event) };
  }
}
