import type { MigrationInterface, QueryRunner } from 'typeorm';

export class Init1795220342744 implements MigrationInterface {
  name = 'Init1795220342744';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      'CREATE TABLE "outbox" ("id" uuid NOT NULL, "tenant_id" text NOT NULL, "event_type" text NOT NULL, "entity_type" text NOT NULL, "entity_id" text NOT NULL, "data" jsonb NOT NULL, "occurred_at" TIMESTAMP WITH TIME ZONE NOT NULL, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "relayed_at" TIMESTAMP WITH TIME ZONE, CONSTRAINT "PK_340ab539f309f03bdaa14aa7649" PRIMARY KEY ("id"))',
    );
    await queryRunner.query(
      'CREATE INDEX "outbox_unrelayed_idx" ON "outbox" ("created_at") WHERE "relayed_at" IS NULL',
    );
    await queryRunner.query(
      'CREATE TABLE "tenants" ("id" uuid NOT NULL DEFAULT gen_random_uuid(), "name" text NOT NULL, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "PK_53be67a04681c66b87ee27c9321" PRIMARY KEY ("id"))',
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TABLE "tenants"');
    await queryRunner.query('DROP INDEX "custody"."outbox_unrelayed_idx"');
    await queryRunner.query('DROP TABLE "outbox"');
  }
}
