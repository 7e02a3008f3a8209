import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The outbox's queue of unrelayed rows (decision 0427): a narrow table of (id, created_at) that a statement
 * trigger fills from every INSERT (or COPY) into `outbox`, and that the relay empties as it claims. An outbox row
 * is written once and never updated: before, the relay stamped `relayed_at`, which wrote a new version of the
 * whole row (its `data` too) and an entry in two indexes for every relayed event.
 */
export const OUTBOX_PENDING_QUEUE = [
  'CREATE TABLE "outbox_pending" ("id" uuid NOT NULL, "created_at" timestamptz NOT NULL)',
  'CREATE INDEX "outbox_pending_created_idx" ON "outbox_pending" ("created_at")',
  // The queue is named with the schema the migration runs in (as outbox_assign_sequence names its counters):
  // the trigger writes its own schema's queue whatever the session's search_path.
  `DO $do$ BEGIN
     EXECUTE format($f$
       CREATE FUNCTION %1$I.outbox_queue_pending() RETURNS trigger LANGUAGE plpgsql AS $fn$
         BEGIN
           INSERT INTO %1$I.outbox_pending (id, created_at) SELECT id, created_at FROM new_rows;
           RETURN NULL;
         END $fn$$f$, current_schema());
   END $do$`,
  `CREATE TRIGGER "outbox_queue_pending" AFTER INSERT ON "outbox" REFERENCING NEW TABLE AS new_rows
     FOR EACH STATEMENT EXECUTE FUNCTION "outbox_queue_pending"()`,
];

/**
 * Moves the outbox to the pending queue (decision 0427). Rows not yet relayed are queued; `relayed_at` stops
 * meaning anything and defaults to the insert time, so that a relay of the previous release (still running
 * during a rolling deploy, and claiming `relayed_at IS NULL`) finds nothing to relay twice, and its now empty
 * partial index `outbox_unrelayed_idx` costs nothing; both go in a later release. Retention goes by
 * `created_at` (a new index, in place of `outbox_relayed_idx`), skipping rows still queued.
 */
export class OutboxPendingQueue1795540000000 implements MigrationInterface {
  name = 'OutboxPendingQueue1795540000000';

  async up(q: QueryRunner): Promise<void> {
    for (const sql of OUTBOX_PENDING_QUEUE) await q.query(sql);
    await q.query(
      'INSERT INTO "outbox_pending" ("id", "created_at") SELECT "id", "created_at" FROM "outbox" WHERE "relayed_at" IS NULL',
    );
    await q.query('UPDATE "outbox" SET "relayed_at" = now() WHERE "relayed_at" IS NULL');
    await q.query('ALTER TABLE "outbox" ALTER COLUMN "relayed_at" SET DEFAULT now()');
    await q.query('DROP INDEX "outbox_relayed_idx"');
    await q.query('CREATE INDEX "outbox_created_idx" ON "outbox" ("created_at")');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP INDEX "outbox_created_idx"');
    await q.query(
      'CREATE INDEX "outbox_relayed_idx" ON "outbox" ("relayed_at") WHERE "relayed_at" IS NOT NULL',
    );
    await q.query('ALTER TABLE "outbox" ALTER COLUMN "relayed_at" DROP DEFAULT');
    await q.query('UPDATE "outbox" o SET "relayed_at" = NULL FROM "outbox_pending" p WHERE p."id" = o."id"');
    await q.query('DROP TRIGGER "outbox_queue_pending" ON "outbox"');
    await q.query('DROP FUNCTION "outbox_queue_pending"()');
    await q.query('DROP TABLE "outbox_pending"');
  }
}
