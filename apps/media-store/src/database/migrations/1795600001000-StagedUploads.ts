import type { MigrationInterface, QueryRunner } from 'typeorm';

export class StagedUploads1795600001000 implements MigrationInterface {
  name = 'StagedUploads1795600001000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      'CREATE TABLE "staged_uploads" ("id" uuid NOT NULL, "storage_key" text NOT NULL, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "PK_b6377692dba290fac21701900ad" PRIMARY KEY ("id"))',
    );
    await queryRunner.query('CREATE INDEX "staged_uploads_created_idx" ON "staged_uploads" ("created_at") ');
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP INDEX "media"."staged_uploads_created_idx"');
    await queryRunner.query('DROP TABLE "staged_uploads"');
  }
}
