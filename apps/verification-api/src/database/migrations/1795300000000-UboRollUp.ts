import type { MigrationInterface, QueryRunner } from 'typeorm';

/** The company roll-up's once-only guard (decision 0140): when `companyChildrenCompleted` went out. */
export class UboRollUp1795300000000 implements MigrationInterface {
  name = 'UboRollUp1795300000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE "applicants" ADD "children_completed_at" TIMESTAMP WITH TIME ZONE');
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE "applicants" DROP COLUMN "children_completed_at"');
  }
}
