import type { MigrationInterface, QueryRunner } from 'typeorm';

export class MediaSlots1795250000000 implements MigrationInterface {
  name = 'MediaSlots1795250000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP INDEX "media"."resources_enrollment_slot_idx"');
    await queryRunner.query('ALTER TABLE "resources" ADD "applicant_id" uuid NOT NULL');
    await queryRunner.query('ALTER TABLE "resources" ADD "seq" integer NOT NULL');
    await queryRunner.query(
      'CREATE INDEX "resources_applicant_idx" ON "resources" ("tenant_id", "applicant_id", "created_at") ',
    );
    await queryRunner.query(
      'CREATE UNIQUE INDEX "resources_active_slot_key" ON "resources" ("enrollment_id", "slot") WHERE "active"',
    );
    await queryRunner.query(
      'CREATE UNIQUE INDEX "resources_slot_seq_key" ON "resources" ("enrollment_id", "slot", "seq") ',
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP INDEX "media"."resources_slot_seq_key"');
    await queryRunner.query('DROP INDEX "media"."resources_active_slot_key"');
    await queryRunner.query('DROP INDEX "media"."resources_applicant_idx"');
    await queryRunner.query('ALTER TABLE "resources" DROP COLUMN "seq"');
    await queryRunner.query('ALTER TABLE "resources" DROP COLUMN "applicant_id"');
    await queryRunner.query(
      'CREATE INDEX "resources_enrollment_slot_idx" ON "resources" ("tenant_id", "enrollment_id", "slot") ',
    );
  }
}
