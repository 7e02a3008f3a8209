import type { MigrationInterface, QueryRunner } from 'typeorm';

const IN_FLIGHT = `'Submitted', 'PendingSignature', 'Broadcasting', 'Confirming'`;

/**
 * The stuck-transaction sweeper finds unfinished transactions by `completed_at IS NULL` (set by the move to any
 * terminal status) instead of by `status`, and ranges them by `created_at` (docs/decisions/0430). No index of
 * `transactions` then names `status` or `updated_at`, the columns every move writes, so a move that is not
 * terminal can be a HOT update: a new version of the row on the same page and no new index entries. The table
 * keeps a fifth of each new page free for those versions. Terminal rows written before `completed_at` existed
 * take their last move's time.
 */
export class UnfinishedTransactionsIndex1795550000000 implements MigrationInterface {
  name = 'UnfinishedTransactionsIndex1795550000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `UPDATE "transactions" SET "completed_at" = "updated_at" WHERE "completed_at" IS NULL AND "status" NOT IN (${IN_FLIGHT})`,
    );
    await q.query(
      'CREATE INDEX "transactions_unfinished_idx" ON "transactions" ("created_at") WHERE "completed_at" IS NULL',
    );
    await q.query('DROP INDEX "transactions_in_flight_idx"');
    await q.query('ALTER TABLE "transactions" SET (fillfactor = 80)');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE "transactions" RESET (fillfactor)');
    await q.query(
      `CREATE INDEX "transactions_in_flight_idx" ON "transactions" ("updated_at") WHERE "status" IN (${IN_FLIGHT})`,
    );
    await q.query('DROP INDEX "transactions_unfinished_idx"');
  }
}
