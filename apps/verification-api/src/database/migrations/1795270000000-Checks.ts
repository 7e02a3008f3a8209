import type { MigrationInterface, QueryRunner } from 'typeorm';

/** The wake trigger of this migration; dropped by ChecksWakeAfterCommit (decision 0407), restored by its down. */
export const CREATE_NOTIFY_CHECKS = [
  `CREATE FUNCTION "notify_checks"() RETURNS trigger LANGUAGE plpgsql AS $$
   BEGIN
     PERFORM pg_notify('verification_checks', '');
     RETURN NULL;
   END $$`,
  `CREATE TRIGGER "applicant_steps_submitted_notify" AFTER INSERT OR UPDATE OF "review_status" ON "applicant_steps"
   FOR EACH ROW WHEN (NEW."review_status" = 'submitted') EXECUTE FUNCTION "notify_checks"()`,
  `CREATE TRIGGER "enrollments_submitted_notify" AFTER UPDATE OF "status" ON "enrollments"
   FOR EACH ROW WHEN (NEW."status" = 'submitted') EXECUTE FUNCTION "notify_checks"()`,
];

/**
 * Step checks (decision 0131): what a check found on a step (the screening matches an operator reads), the
 * applicant's blocklist flag and the status a deactivation keeps for the activation, the indexes of the worker's two sweeps (submitted steps, expired enrollments),
 * and a trigger that wakes the worker (NOTIFY verification_checks) when a step or an enrollment is submitted.
 */
export class Checks1795270000000 implements MigrationInterface {
  name = 'Checks1795270000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE "applicant_steps" ADD "check_result" jsonb');
    await queryRunner.query('ALTER TABLE "applicants" ADD "blocklisted" boolean NOT NULL DEFAULT false');
    await queryRunner.query('ALTER TABLE "applicants" ADD "status_before_deactivation" text');
    await queryRunner.query(
      `CREATE INDEX "applicant_steps_submitted_idx" ON "applicant_steps" ("updated_at") WHERE "review_status" = 'submitted'`,
    );
    await queryRunner.query(
      `CREATE INDEX "enrollments_expiry_idx" ON "enrollments" ("expires_at") WHERE "status" IN ('open', 'submitted', 'in_review')`,
    );
    for (const statement of CREATE_NOTIFY_CHECKS) await queryRunner.query(statement);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TRIGGER "enrollments_submitted_notify" ON "enrollments"');
    await queryRunner.query('DROP TRIGGER "applicant_steps_submitted_notify" ON "applicant_steps"');
    await queryRunner.query('DROP FUNCTION "notify_checks"()');
    await queryRunner.query('DROP INDEX "enrollments_expiry_idx"');
    await queryRunner.query('DROP INDEX "applicant_steps_submitted_idx"');
    await queryRunner.query('ALTER TABLE "applicants" DROP COLUMN "status_before_deactivation"');
    await queryRunner.query('ALTER TABLE "applicants" DROP COLUMN "blocklisted"');
    await queryRunner.query('ALTER TABLE "applicant_steps" DROP COLUMN "check_result"');
  }
}
