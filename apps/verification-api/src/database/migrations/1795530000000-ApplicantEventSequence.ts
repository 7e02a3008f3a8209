import { numberEventsFromCounters, numberEventsFromRows, type RowNumberedEntity } from '@tessera/platform';
import type { MigrationInterface, QueryRunner } from 'typeorm';

const APPLICANTS: RowNumberedEntity = {
  entityType: 'applicant',
  createdEventType: 'applicantCreated',
  table: 'applicants',
  tenantColumn: 'product_id',
  decision: '0426',
};

/**
 * An applicant's events are numbered from its own row (docs/decisions/0426), as custody numbers a transaction's
 * (decision 0425): `applicants.event_sequence` is the sequence of the applicant's latest event, 1 for
 * `applicantCreated` (given by the create batch, which writes the row and the event in one statement). Every
 * other applicant event is written by a transaction that already holds the applicant's row (it locked or
 * updated it first), and the trigger numbers it by bumping `event_sequence` under that lock: gap-free and in
 * commit order, as the counter row was (decision 0225). Existing applicants take their counters' values; the
 * counters are then dropped, so the counter table no longer grows by a row per applicant.
 */
export class ApplicantEventSequence1795530000000 implements MigrationInterface {
  name = 'ApplicantEventSequence1795530000000';

  async up(q: QueryRunner): Promise<void> {
    await numberEventsFromRows(q, APPLICANTS);
  }

  async down(q: QueryRunner): Promise<void> {
    await numberEventsFromCounters(q, APPLICANTS);
  }
}
