import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The end of a delivery's current claim, null when no worker holds it (decision 0452): a partner's re-queue of a
 * delivery whose attempt is in flight waits for that attempt instead of starting a second one, and an attempt
 * is recorded only by the worker whose claim is still the delivery's.
 */
export class DeliveryClaims1795600000461 implements MigrationInterface {
  name = 'DeliveryClaims1795600000461';

  async up(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE "webhook_deliveries" ADD "claimed_until" TIMESTAMP WITH TIME ZONE');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE "webhook_deliveries" DROP COLUMN "claimed_until"');
  }
}
