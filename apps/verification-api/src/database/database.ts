import { type ServiceDatabaseOptions, OutboxEventEntity } from '@tessera/platform';
import { ProductEntity } from '../modules/products/entities/product.entity';
import { migrations } from './migrations';

export const SCHEMA = 'verification';
export const entities = [ProductEntity, OutboxEventEntity];

export const databaseOptions = (url: string): ServiceDatabaseOptions => ({
  url,
  schema: SCHEMA,
  entities,
  migrations,
});
