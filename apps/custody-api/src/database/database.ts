import { type ServiceDatabaseOptions, OutboxEventEntity } from '@tessera/platform';
import { TenantEntity } from '../modules/tenants/entities/tenant.entity';
import { migrations } from './migrations';

export const SCHEMA = 'custody';
export const entities = [TenantEntity, OutboxEventEntity];

export const databaseOptions = (url: string): ServiceDatabaseOptions => ({
  url,
  schema: SCHEMA,
  entities,
  migrations,
});
