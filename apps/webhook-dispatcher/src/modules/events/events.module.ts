import { Module } from '@nestjs/common';
import { EventsProcessor } from './events.processor';
import { EventsRepository } from './events.repository';

@Module({ providers: [EventsRepository, EventsProcessor] })
export class EventsModule {}
