import type { MigrationInterface, QueryRunner } from 'typeorm';

/** The envelope's `sequence` kept with each received event and delivery (decision 0225). */
export class DeliverySequence1795410000001 implements MigrationInterface {
  name = 'DeliverySequence1795410000001';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE "received_events" ADD "sequence" bigint');
    await queryRunner.query('ALTER TABLE "webhook_deliveries" ADD "sequence" bigint');
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE "webhook_deliveries" DROP COLUMN "sequence"');
    await queryRunner.query('ALTER TABLE "received_events" DROP COLUMN "sequence"');
  }
}
