import type { MigrationInterface, QueryRunner } from 'typeorm';
import { CREATE_NOTIFY_CHECKS } from './1795270000000-Checks';

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
    for (const statement of CREATE_NOTIFY_CHECKS) await queryRunner.query(statement);
  }
}
