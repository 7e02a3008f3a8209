import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Operator questionnaires (per product) and the SDK's answers to them (per enrollment). */
export class Questionnaires1795260000000 implements MigrationInterface {
  name = 'Questionnaires1795260000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE TABLE "questionnaires" ("product_id" uuid NOT NULL, "id" text NOT NULL, "title" text NOT NULL,
        "questions" jsonb NOT NULL, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
        CONSTRAINT "PK_questionnaires" PRIMARY KEY ("product_id", "id"))`,
    );
    await queryRunner.query(
      `CREATE TABLE "questionnaire_answers" ("enrollment_id" uuid NOT NULL, "applicant_id" uuid NOT NULL,
        "questionnaire_id" text NOT NULL, "answers" jsonb NOT NULL DEFAULT '{}',
        "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
        CONSTRAINT "PK_questionnaire_answers" PRIMARY KEY ("enrollment_id"))`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TABLE "questionnaire_answers"');
    await queryRunner.query('DROP TABLE "questionnaires"');
  }
}
