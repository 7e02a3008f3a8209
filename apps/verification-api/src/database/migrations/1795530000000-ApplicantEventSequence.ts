import { assignSequenceStatic, rowNumberingRules } from '@tessera/platform';
import type { MigrationInterface, QueryRunner } from 'typeorm';

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
    await q.query('ALTER TABLE "applicants" ADD "event_sequence" bigint NOT NULL DEFAULT 1');
    // Only applicants with more than their created event are rewritten: the column's default is already 1.
    await q.query(`UPDATE "applicants" a SET "event_sequence" = s."last_sequence" FROM "outbox_sequence" s
      WHERE s."entity_type" = 'applicant' AND s."entity_id" = a."id"::text AND s."tenant_id" = a."product_id"::text
        AND s."last_sequence" <> 1`);
    await q.query(`DELETE FROM "outbox_sequence" WHERE "entity_type" = 'applicant'`);
    await q.query(
      assignSequenceStatic(
        rowNumberingRules({
          entityType: 'applicant',
          createdEventType: 'applicantCreated',
          table: 'applicants',
          decision: '0426',
        }),
      ),
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(assignSequenceStatic());
    await q.query(`INSERT INTO "outbox_sequence" ("tenant_id", "entity_type", "entity_id", "last_sequence")
      SELECT "product_id"::text, 'applicant', "id"::text, "event_sequence" FROM "applicants"`);
    await q.query('ALTER TABLE "applicants" DROP COLUMN "event_sequence"');
  }
}
