import type { MigrationInterface, QueryRunner } from 'typeorm';

export class Init1795220212136 implements MigrationInterface {
  name = 'Init1795220212136';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      'CREATE TABLE "resources" ("id" uuid NOT NULL, "tenant_id" text NOT NULL, "enrollment_id" uuid NOT NULL, "slot" text NOT NULL, "kind" text NOT NULL, "mime" text NOT NULL, "size_bytes" bigint NOT NULL, "sha256" character(64) NOT NULL, "storage_key" text NOT NULL, "document_type" text, "side" text, "source" text, "active" boolean NOT NULL DEFAULT true, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "superseded_at" TIMESTAMP WITH TIME ZONE, CONSTRAINT "PK_632484ab9dff41bba94f9b7c85e" PRIMARY KEY ("id"))',
    );
    await queryRunner.query(
      'CREATE INDEX "resources_enrollment_slot_idx" ON "resources" ("tenant_id", "enrollment_id", "slot") ',
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP INDEX "media"."resources_enrollment_slot_idx"');
    await queryRunner.query('DROP TABLE "resources"');
  }
}
