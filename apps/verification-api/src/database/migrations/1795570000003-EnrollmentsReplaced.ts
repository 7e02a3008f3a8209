import type { MigrationInterface, QueryRunner } from 'typeorm';

const STATUSES = (extra: string[]) =>
  ['open', 'submitted', 'in_review', 'completed', 'rejected', 'failed', 'expired', ...extra]
    .map((s) => `'${s}'`)
    .join(', ');

/**
 * Enrollments gain the status `replaced` (decision 0441): opening a link closes the applicant's other open
 * enrollments, so one link at a time can write to an applicant. Open enrollments that already have a newer
 * one are replaced here too.
 */
export class EnrollmentsReplaced1795570000003 implements MigrationInterface {
  name = 'EnrollmentsReplaced1795570000003';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE "enrollments" DROP CONSTRAINT "enrollments_status_check"');
    await queryRunner.query(
      `ALTER TABLE "enrollments" ADD CONSTRAINT "enrollments_status_check" CHECK ("status" IN (${STATUSES(['replaced'])}))`,
    );
    await queryRunner.query(
      `UPDATE enrollments e SET status = 'replaced', updated_at = now()
        WHERE e.status = 'open'
          AND EXISTS (SELECT 1 FROM enrollments n WHERE n.applicant_id = e.applicant_id
                        AND (n.created_at, n.id) > (e.created_at, e.id))`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`UPDATE enrollments SET status = 'expired' WHERE status = 'replaced'`);
    await queryRunner.query('ALTER TABLE "enrollments" DROP CONSTRAINT "enrollments_status_check"');
    await queryRunner.query(
      `ALTER TABLE "enrollments" ADD CONSTRAINT "enrollments_status_check" CHECK ("status" IN (${STATUSES([])}))`,
    );
  }
}
