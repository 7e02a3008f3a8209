import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Drops the triggers that NOTIFY `verification_checks` inside the transaction that submits a step or an
 * enrollment (Checks migration). A notifying commit takes Postgres' cluster-wide notify lock through its WAL
 * flush (decision 0403), so it held up every other producing commit of the cluster. The SDK repository now wakes
 * the worker after its commit (`notifyChannel`, decision 0407); the worker's poll is the backstop, as before.
 */
export class ChecksWakeAfterCommit1795510000000 implements MigrationInterface {
  name = 'ChecksWakeAfterCommit1795510000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TRIGGER IF EXISTS "enrollments_submitted_notify" ON "enrollments"');
    await queryRunner.query('DROP TRIGGER IF EXISTS "applicant_steps_submitted_notify" ON "applicant_steps"');
    await queryRunner.query('DROP FUNCTION IF EXISTS "notify_checks"()');
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE FUNCTION "notify_checks"() RETURNS trigger LANGUAGE plpgsql AS $$
       BEGIN
         PERFORM pg_notify('verification_checks', '');
         RETURN NULL;
       END $$`,
    );
    await queryRunner.query(
      `CREATE TRIGGER "applicant_steps_submitted_notify" AFTER INSERT OR UPDATE OF "review_status" ON "applicant_steps"
       FOR EACH ROW WHEN (NEW."review_status" = 'submitted') EXECUTE FUNCTION "notify_checks"()`,
    );
    await queryRunner.query(
      `CREATE TRIGGER "enrollments_submitted_notify" AFTER UPDATE OF "status" ON "enrollments"
       FOR EACH ROW WHEN (NEW."status" = 'submitted') EXECUTE FUNCTION "notify_checks"()`,
    );
  }
}
