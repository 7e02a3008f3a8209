import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Finished deliveries by creation, for the retention pass (WEBHOOK_DELIVERY_RETENTION_DAYS, decision 0433). Partial:
 * a delivery enters it when it is delivered or dead, never while it is pending or retrying.
 */
export class DeliveryRetention1795570000001 implements MigrationInterface {
  name = 'DeliveryRetention1795570000001';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `CREATE INDEX "webhook_deliveries_finished_idx" ON "webhook_deliveries" ("created_at") WHERE "status" IN ('delivered', 'dead')`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP INDEX "webhook_deliveries_finished_idx"');
  }
}
