import { type ServiceDatabaseOptions } from '@tessera/platform';
import { ReceivedEventEntity } from '../modules/events/entities/received-event.entity';
import { migrations } from './migrations';

export const SCHEMA = 'webhooks';
export const entities = [ReceivedEventEntity];

export const databaseOptions = (url: string): ServiceDatabaseOptions => ({
  url,
  schema: SCHEMA,
  entities,
  migrations,
});
