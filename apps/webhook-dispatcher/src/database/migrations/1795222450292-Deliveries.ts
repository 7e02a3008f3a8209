import type { MigrationInterface, QueryRunner } from 'typeorm';

export class Deliveries1795222450292 implements MigrationInterface {
  name = 'Deliveries1795222450292';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      'CREATE TABLE "webhook_attempts" ("id" uuid NOT NULL DEFAULT gen_random_uuid(), "delivery_id" uuid NOT NULL, "attempt_number" integer NOT NULL, "request_url" text NOT NULL, "http_status_code" integer, "response_body" text, "error_message" text, "duration_ms" integer NOT NULL, "attempted_at" TIMESTAMP WITH TIME ZONE NOT NULL, "success" boolean NOT NULL, CONSTRAINT "PK_2de7e7887ad97de459adab62638" PRIMARY KEY ("id"))',
    );
    await queryRunner.query(
      'CREATE UNIQUE INDEX "webhook_attempts_delivery_number_uq" ON "webhook_attempts" ("delivery_id", "attempt_number") ',
    );
    await queryRunner.query(
      'CREATE TABLE "webhook_deliveries" ("id" uuid NOT NULL DEFAULT gen_random_uuid(), "event_id" uuid NOT NULL, "endpoint_id" uuid NOT NULL, "tenant_id" text NOT NULL, "source" text NOT NULL, "event_type" text NOT NULL, "entity_type" text NOT NULL, "entity_id" text NOT NULL, "payload" text NOT NULL, "status" text NOT NULL DEFAULT \'pending\', "attempt_count" integer NOT NULL DEFAULT \'0\', "attempt_base" integer NOT NULL DEFAULT \'0\', "next_attempt_at" TIMESTAMP WITH TIME ZONE, "last_attempt_at" TIMESTAMP WITH TIME ZONE, "delivered_at" TIMESTAMP WITH TIME ZONE, "last_error" text, "occurred_at" TIMESTAMP WITH TIME ZONE NOT NULL, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "webhook_deliveries_status_ck" CHECK ("status" IN (\'pending\', \'delivered\', \'failed\', \'dead\')), CONSTRAINT "PK_535dd409947fb6d8fc6dfc0112a" PRIMARY KEY ("id"))',
    );
    await queryRunner.query(
      'CREATE INDEX "webhook_deliveries_list_idx" ON "webhook_deliveries" ("tenant_id", "source", "created_at", "id") ',
    );
    await queryRunner.query(
      'CREATE INDEX "webhook_deliveries_due_idx" ON "webhook_deliveries" ("next_attempt_at") WHERE "status" IN (\'pending\', \'failed\')',
    );
    await queryRunner.query(
      'CREATE UNIQUE INDEX "webhook_deliveries_event_endpoint_uq" ON "webhook_deliveries" ("event_id", "endpoint_id") ',
    );
    await queryRunner.query(
      'CREATE TABLE "webhook_endpoints" ("id" uuid NOT NULL DEFAULT gen_random_uuid(), "tenant_id" text NOT NULL, "source" text NOT NULL, "url" text NOT NULL, "secret_sealed" text NOT NULL, "subscribed_event_types" jsonb, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "PK_054c4cfb95223732f5939d2d546" PRIMARY KEY ("id"))',
    );
    await queryRunner.query(
      'CREATE UNIQUE INDEX "webhook_endpoints_tenant_source_uq" ON "webhook_endpoints" ("tenant_id", "source") ',
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP INDEX "webhooks"."webhook_endpoints_tenant_source_uq"');
    await queryRunner.query('DROP TABLE "webhook_endpoints"');
    await queryRunner.query('DROP INDEX "webhooks"."webhook_deliveries_event_endpoint_uq"');
    await queryRunner.query('DROP INDEX "webhooks"."webhook_deliveries_due_idx"');
    await queryRunner.query('DROP INDEX "webhooks"."webhook_deliveries_list_idx"');
    await queryRunner.query('DROP TABLE "webhook_deliveries"');
    await queryRunner.query('DROP INDEX "webhooks"."webhook_attempts_delivery_number_uq"');
    await queryRunner.query('DROP TABLE "webhook_attempts"');
  }
}
