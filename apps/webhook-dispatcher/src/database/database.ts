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

export const databaseOptions = (url: string): ServiceDatabaseOptions => ({
  url,
  schema: SCHEMA,
  entities,
  migrations,
});
