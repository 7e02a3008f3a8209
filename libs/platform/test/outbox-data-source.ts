import { DataSource } from 'typeorm';
import { serviceDataSourceOptions } from '../src/database';
import { OutboxEventEntity } from '../src/outbox.entity';

export const POSTGRES_URL = process.env.TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

/** A service pool with the product's settings (serviceDataSourceOptions) on a test schema holding an outbox. */
export function outboxDataSource(schema: string, poolSize: number): DataSource {
  return new DataSource(
    serviceDataSourceOptions({
      url: POSTGRES_URL,
      schema,
      entities: [OutboxEventEntity],
      migrations: [],
      poolSize,
    }),
  );
}
