import type { ServiceDatabaseOptions } from '@tessera/platform';
import { ResourceEntity } from '../modules/resources/entities/resource.entity';
import { StagedUploadEntity } from '../modules/resources/entities/staged-upload.entity';
import { migrations } from './migrations';

export const SCHEMA = 'media';
export const entities = [ResourceEntity, StagedUploadEntity];

export const databaseOptions = (url: string): ServiceDatabaseOptions => ({
  url,
  schema: SCHEMA,
  entities,
  migrations,
});
