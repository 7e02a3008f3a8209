import { type ServiceDatabaseOptions } from '@tessera/platform';
import { WebhookAttemptEntity } from '../modules/deliveries/entities/webhook-attempt.entity';
import { WebhookDeliveryEntity } from '../modules/deliveries/entities/webhook-delivery.entity';
import { WebhookEndpointEntity } from '../modules/endpoints/entities/webhook-endpoint.entity';
import { ReceivedEventEntity } from '../modules/events/entities/received-event.entity';
import { migrations } from './migrations';

export const SCHEMA = 'webhooks';
export const entities = [
  ReceivedEventEntity,
  WebhookEndpointEntity,
  WebhookDeliveryEntity,
  WebhookAttemptEntity,
];

/**
 * Every statement the dispatcher runs is built on an index, and its hot batch statements are prepared once per
 * connection: Postgres plans them generically at their sixth run and keeps that plan until the next ANALYZE of
 * the table. On a young table that plan is a sequential scan (the attempt batch's lookup of its deliveries by
 * primary key), and each batch then reads the whole table until autovacuum analyzes it: 2.6 instead of 0.85 ms
 * for eight attempts at 20,000 deliveries, growing with the table. With sequential scans off, the planner takes
 * the index at any size (decision 0413).
 */
export const SESSION_SETTINGS = { enable_seqscan: 'off' } as const;

export const databaseOptions = (url: string): ServiceDatabaseOptions => ({
  url,
  schema: SCHEMA,
  entities,
  migrations,
  settings: SESSION_SETTINGS,
});
