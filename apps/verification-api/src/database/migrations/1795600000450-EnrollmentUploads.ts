import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Enrollments record the latest accepted upload of each of the hosted page's slots (decision 0447), so that
 * `GET /api/v1/sdk/session` tells a reloaded page which slots of its open steps are already filled without a
 * round trip to media-store. Uploads made before this migration are not listed (media-store still has them,
 * and the step submit still reads them there).
 */
export class EnrollmentUploads1795600000450 implements MigrationInterface {
  name = 'EnrollmentUploads1795600000450';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "enrollments" ADD "uploads" jsonb NOT NULL DEFAULT '{}'`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE "enrollments" DROP COLUMN "uploads"');
  }
}
