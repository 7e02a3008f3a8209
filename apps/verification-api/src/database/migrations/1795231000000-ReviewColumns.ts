import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Operator review: comments on a step decision, and the applicant's sandbox flag for its webhook events. */
export class ReviewColumns1795231000000 implements MigrationInterface {
  name = 'ReviewColumns1795231000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE "applicant_steps" ADD "moderation_comment" text');
    await queryRunner.query('ALTER TABLE "applicant_steps" ADD "client_comment" text');
    await queryRunner.query('ALTER TABLE "applicants" ADD "sandbox" boolean NOT NULL DEFAULT false');
    // Applicants created before the column: their applicantCreated event recorded the flag.
    await queryRunner.query(
      `UPDATE "applicants" a SET "sandbox" = true
         FROM "outbox" o
        WHERE o.event_type = 'applicantCreated' AND o.entity_id = a.id::text AND (o.data->>'sandbox')::boolean`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE "applicants" DROP COLUMN "sandbox"');
    await queryRunner.query('ALTER TABLE "applicant_steps" DROP COLUMN "client_comment"');
    await queryRunner.query('ALTER TABLE "applicant_steps" DROP COLUMN "moderation_comment"');
  }
}
