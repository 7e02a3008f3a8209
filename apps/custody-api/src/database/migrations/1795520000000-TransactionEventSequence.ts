import { numberEventsFromCounters, numberEventsFromRows, type RowNumberedEntity } from '@tessera/platform';
import type { MigrationInterface, QueryRunner } from 'typeorm';

const TRANSACTIONS: RowNumberedEntity = {
  entityType: 'transaction',
  createdEventType: 'transaction.created',
  table: 'transactions',
  tenantColumn: 'tenant_id',
  decision: '0425',
};

/**
 * A transaction's events are numbered from its own row (docs/decisions/0425): `transactions.event_sequence`
 * is the sequence of its latest event, 1 for `transaction.created` (the row and the event are written in one
 * statement), bumped by the compare-and-set UPDATE of every move, which answers the new number for the move's
 * `transaction.status.updated`. The row's lock serialises the writers of one transaction until commit and a
 * rollback takes the number back, as the counter row did, so the sequence stays gap-free (decision 0225);
 * the counter table keeps numbering the other entities (balances). Custody's trigger takes a sequence the
 * producer gave. A transaction event without one (the previous release during a rolling deploy, or a path
 * that does not number its events) is numbered from the same row: `transaction.created` is 1, any other bumps
 * `event_sequence` (the row was written earlier in the transaction, and its lock is already held), so no path
 * falls back to a counter that no longer moves. Existing transactions take their counters' values; the
 * counters are then dropped.
 */
export class TransactionEventSequence1795520000000 implements MigrationInterface {
  name = 'TransactionEventSequence1795520000000';

  async up(q: QueryRunner): Promise<void> {
    await numberEventsFromRows(q, TRANSACTIONS);
  }

  async down(q: QueryRunner): Promise<void> {
    await numberEventsFromCounters(q, TRANSACTIONS);
  }
}
