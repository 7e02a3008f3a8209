import type { MigrationInterface } from 'typeorm';
import {
  DropOutboxNotifyTrigger1795480000000,
  OutboxNotifyTrigger1795230000000,
} from './outbox-notify.migration';
import { OutboxPendingQueue1795540000000 } from './outbox-pending.migration';
import { OutboxRetention1795490000000 } from './outbox-retention.migration';
import { OutboxSequence1795410000000, OutboxSequenceStatic1795500000000 } from './outbox-sequence.migration';
import { TimeOrderedIds1795560000000 } from './time-ordered-ids';

type MigrationClass = new () => MigrationInterface;

/** The platform's migrations of a producing service's outbox table, run after the one that creates it. */
export const outboxMigrations: MigrationClass[] = [
  OutboxNotifyTrigger1795230000000,
  OutboxSequence1795410000000,
  DropOutboxNotifyTrigger1795480000000,
  OutboxRetention1795490000000,
  OutboxSequenceStatic1795500000000,
  OutboxPendingQueue1795540000000,
  TimeOrderedIds1795560000000,
];

/**
 * The files that define those migrations, with the constants they use: a test template is rebuilt when one
 * changes (libs/testing hashes them with each service's own migrations folder).
 */
export const outboxMigrationSources: readonly string[] = [
  './outbox-migrations',
  './outbox-notify.migration',
  './outbox-pending.migration',
  './outbox-retention.migration',
  './outbox-sequence.migration',
  './time-ordered-ids',
].map((m) => require.resolve(m));

const timestamp = (m: MigrationClass) => Number(/(\d{13})$/.exec(m.name)?.[1] ?? 0);

/**
 * A producing service's own migrations with the platform's outbox migrations, oldest first (by the timestamp
 * that ends each class name, the order TypeORM runs them in), so a new outbox migration is listed once.
 */
export function withOutboxMigrations(own: MigrationClass[]): MigrationClass[] {
  return [...own, ...outboxMigrations].sort((a, b) => timestamp(a) - timestamp(b));
}
