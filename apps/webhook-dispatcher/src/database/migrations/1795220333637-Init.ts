import type { MigrationInterface, QueryRunner } from 'typeorm';

export class Init1795220333637 implements MigrationInterface {
  name = 'Init1795220333637';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      'CREATE TABLE "received_events" ("event_id" uuid NOT NULL, "source" text NOT NULL, "tenant_id" text NOT NULL, "event_type" text NOT NULL, "entity_type" text NOT NULL, "entity_id" text NOT NULL, "data" jsonb NOT NULL, "occurred_at" TIMESTAMP WITH TIME ZONE NOT NULL, "received_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "PK_d7856b32aa63551fb496f590885" PRIMARY KEY ("event_id"))',
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TABLE "received_events"');
  }
}
