import type { MigrationInterface, QueryRunner } from 'typeorm';

export class Core1795222519808 implements MigrationInterface {
  name = 'Core1795222519808';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      'CREATE TABLE "applicant_steps" ("id" uuid NOT NULL DEFAULT gen_random_uuid(), "applicant_id" uuid NOT NULL, "enrollment_id" uuid, "kind" text NOT NULL, "review_status" text NOT NULL DEFAULT \'pending\', "review_answer" text, "review_reject_type" text, "reject_labels" jsonb NOT NULL DEFAULT \'[]\', "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "applicant_steps_reject_type_check" CHECK ("review_reject_type" IN (\'FINAL\', \'RETRY\', \'EXPIRED\')), CONSTRAINT "applicant_steps_review_answer_check" CHECK ("review_answer" IN (\'GREEN\', \'RED\')), CONSTRAINT "applicant_steps_review_status_check" CHECK ("review_status" IN (\'pending\', \'submitted\', \'in_review\', \'completed\', \'awaitingOperatorReview\', \'expired\')), CONSTRAINT "PK_dfd0cebe546ef944fddcd736714" PRIMARY KEY ("id"))',
    );
    await queryRunner.query(
      'CREATE UNIQUE INDEX "applicant_steps_applicant_kind_key" ON "applicant_steps" ("applicant_id", "kind") ',
    );
    await queryRunner.query(
      'CREATE TABLE "applicants" ("id" uuid NOT NULL DEFAULT gen_random_uuid(), "product_id" uuid NOT NULL, "external_user_id" text NOT NULL, "type" text NOT NULL, "level_id" uuid, "status" text NOT NULL DEFAULT \'init\', "risk_level" text NOT NULL DEFAULT \'unknown\', "info" jsonb NOT NULL DEFAULT \'{}\', "attempt" integer NOT NULL DEFAULT \'0\', "review_answer" text, "review_reject_type" text, "reject_labels" jsonb NOT NULL DEFAULT \'[]\', "moderation_comment" text, "reviewed_at" TIMESTAMP WITH TIME ZONE, "parent_applicant_id" uuid, "has_no_ubos" boolean NOT NULL DEFAULT false, "has_no_shareholders" boolean NOT NULL DEFAULT false, "has_no_directors" boolean NOT NULL DEFAULT false, "has_no_representatives" boolean NOT NULL DEFAULT false, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "applicants_risk_level_check" CHECK ("risk_level" IN (\'unknown\', \'low\', \'medium\', \'high\')), CONSTRAINT "applicants_status_check" CHECK ("status" IN (\'init\', \'pending\', \'in_review\', \'awaiting_user\', \'approved\', \'rejected\', \'expired\', \'deactivated\')), CONSTRAINT "applicants_type_check" CHECK ("type" IN (\'individual\', \'company\')), CONSTRAINT "PK_c02ec3c46124479ce758ca50943" PRIMARY KEY ("id"))',
    );
    await queryRunner.query(
      'CREATE INDEX "applicants_parent_idx" ON "applicants" ("parent_applicant_id") WHERE "parent_applicant_id" IS NOT NULL',
    );
    await queryRunner.query('CREATE INDEX "applicants_level_idx" ON "applicants" ("level_id") ');
    await queryRunner.query(
      'CREATE UNIQUE INDEX "applicants_external_user_product_key" ON "applicants" ("external_user_id", "product_id") ',
    );
    await queryRunner.query(
      'CREATE TABLE "field_claims" ("applicant_id" uuid NOT NULL, "field" text NOT NULL, "value" jsonb NOT NULL, "claimed_by" text NOT NULL DEFAULT \'partner\', "claimed_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "field_claims_claimed_by_check" CHECK ("claimed_by" IN (\'partner\')), CONSTRAINT "PK_4da5435968d63427e5bf3b41f18" PRIMARY KEY ("applicant_id", "field"))',
    );
    await queryRunner.query(
      'CREATE TABLE "review_events" ("id" uuid NOT NULL DEFAULT gen_random_uuid(), "applicant_id" uuid NOT NULL, "product_id" uuid NOT NULL, "event_type" text NOT NULL, "actor_type" text NOT NULL, "data" jsonb NOT NULL DEFAULT \'{}\', "at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT clock_timestamp(), CONSTRAINT "PK_56256411bd89756b5d504504f59" PRIMARY KEY ("id"))',
    );
    await queryRunner.query(
      'CREATE INDEX "review_events_applicant_at_idx" ON "review_events" ("applicant_id", "at") ',
    );
    await queryRunner.query(
      'CREATE TABLE "ubos" ("id" uuid NOT NULL DEFAULT gen_random_uuid(), "parent_applicant_id" uuid NOT NULL, "ubo_index" integer NOT NULL, "full_name" text NOT NULL, "date_of_birth" text, "ownership_percent" numeric(5,2), "roles" jsonb NOT NULL DEFAULT \'[]\', "email" text, "nationality" text, "linked_applicant_id" uuid, "source" text NOT NULL DEFAULT \'partner\', "identity_changed_after_spawn" boolean NOT NULL DEFAULT false, "removed" boolean NOT NULL DEFAULT false, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "PK_6a6ae76b071d8888098623995ae" PRIMARY KEY ("id"))',
    );
    await queryRunner.query(
      'CREATE UNIQUE INDEX "ubos_parent_index_key" ON "ubos" ("parent_applicant_id", "ubo_index") ',
    );
    await queryRunner.query(
      'CREATE TABLE "levels" ("id" uuid NOT NULL DEFAULT gen_random_uuid(), "product_id" uuid NOT NULL, "name" text NOT NULL, "applicant_type" text NOT NULL, "is_active" boolean NOT NULL DEFAULT true, "is_default" boolean NOT NULL DEFAULT false, "steps" jsonb NOT NULL DEFAULT \'[]\', "attached_questionnaire_id" text, "personal_info_fields" jsonb NOT NULL DEFAULT \'[]\', "personal_info_required_fields" jsonb NOT NULL DEFAULT \'[]\', "company_data_fields" jsonb NOT NULL DEFAULT \'[]\', "company_required_fields" jsonb NOT NULL DEFAULT \'[]\', "company_required_documents" jsonb NOT NULL DEFAULT \'[]\', "company_documents_min_required" integer, "company_legal_forms" jsonb NOT NULL DEFAULT \'[]\', "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "levels_applicant_type_check" CHECK ("applicant_type" IN (\'individual\', \'company\')), CONSTRAINT "PK_05f8dd8f715793c64d49e3f1901" PRIMARY KEY ("id"))',
    );
    await queryRunner.query(
      'CREATE UNIQUE INDEX "levels_one_default_per_type" ON "levels" ("product_id", "applicant_type") WHERE "is_default"',
    );
    await queryRunner.query(
      'CREATE UNIQUE INDEX "levels_product_name_key" ON "levels" ("product_id", "name") ',
    );
    await queryRunner.query(
      'CREATE TABLE "api_keys" ("api_key" text NOT NULL, "product_id" uuid NOT NULL, "environment" text NOT NULL, "secret_hash" text NOT NULL, "active" boolean NOT NULL DEFAULT true, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "deactivated_at" TIMESTAMP WITH TIME ZONE, CONSTRAINT "api_keys_environment_check" CHECK ("environment" IN (\'production\', \'sandbox\')), CONSTRAINT "PK_9ccce5863aec84d045d778179de" PRIMARY KEY ("api_key"))',
    );
    await queryRunner.query('CREATE INDEX "api_keys_product_idx" ON "api_keys" ("product_id") ');
    await queryRunner.query(
      'CREATE TABLE "enrollments" ("id" uuid NOT NULL DEFAULT gen_random_uuid(), "product_id" uuid NOT NULL, "applicant_id" uuid NOT NULL, "level_id" uuid NOT NULL, "short_code" text NOT NULL, "status" text NOT NULL DEFAULT \'open\', "presentation" jsonb NOT NULL DEFAULT \'{}\', "expires_at" TIMESTAMP WITH TIME ZONE NOT NULL, "completed_at" TIMESTAMP WITH TIME ZONE, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "enrollments_status_check" CHECK ("status" IN (\'open\', \'submitted\', \'in_review\', \'completed\', \'rejected\', \'failed\', \'expired\')), CONSTRAINT "PK_7c0f752f9fb68bf6ed7367ab00f" PRIMARY KEY ("id"))',
    );
    await queryRunner.query('CREATE INDEX "enrollments_applicant_idx" ON "enrollments" ("applicant_id") ');
    await queryRunner.query(
      'CREATE UNIQUE INDEX "enrollments_short_code_key" ON "enrollments" ("short_code") ',
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP INDEX "verification"."enrollments_short_code_key"');
    await queryRunner.query('DROP INDEX "verification"."enrollments_applicant_idx"');
    await queryRunner.query('DROP TABLE "enrollments"');
    await queryRunner.query('DROP INDEX "verification"."api_keys_product_idx"');
    await queryRunner.query('DROP TABLE "api_keys"');
    await queryRunner.query('DROP INDEX "verification"."levels_product_name_key"');
    await queryRunner.query('DROP INDEX "verification"."levels_one_default_per_type"');
    await queryRunner.query('DROP TABLE "levels"');
    await queryRunner.query('DROP INDEX "verification"."ubos_parent_index_key"');
    await queryRunner.query('DROP TABLE "ubos"');
    await queryRunner.query('DROP INDEX "verification"."review_events_applicant_at_idx"');
    await queryRunner.query('DROP TABLE "review_events"');
    await queryRunner.query('DROP TABLE "field_claims"');
    await queryRunner.query('DROP INDEX "verification"."applicants_external_user_product_key"');
    await queryRunner.query('DROP INDEX "verification"."applicants_level_idx"');
    await queryRunner.query('DROP INDEX "verification"."applicants_parent_idx"');
    await queryRunner.query('DROP TABLE "applicants"');
    await queryRunner.query('DROP INDEX "verification"."applicant_steps_applicant_kind_key"');
    await queryRunner.query('DROP TABLE "applicant_steps"');
  }
}
