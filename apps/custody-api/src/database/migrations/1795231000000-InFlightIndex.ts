import type { MigrationInterface, QueryRunner } from 'typeorm';

/** In-flight transactions by updated_at, for the stuck-transaction sweeper; terminal rows leave the index. */
export class InFlightIndex1795231000000 implements MigrationInterface {
  name = 'InFlightIndex1795231000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      'CREATE INDEX "transactions_in_flight_idx" ON "transactions" ("updated_at") WHERE "status" IN (\'Submitted\', \'PendingSignature\', \'Broadcasting\', \'Confirming\')',
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP INDEX "custody"."transactions_in_flight_idx"');
  }
}
