import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Whether an endpoint's signing secret is known to have reached the partner (decision 0448): the PUT that stored
 * it (`secret_put_id`) and whether the API acknowledged its reply. Existing secrets count as handed over.
 */
export class SecretHandover1795600000460 implements MigrationInterface {
  name = 'SecretHandover1795600000460';

  async up(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE "webhook_endpoints" ADD "secret_put_id" uuid');
    await q.query('ALTER TABLE "webhook_endpoints" ADD "secret_acknowledged" boolean NOT NULL DEFAULT true');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE "webhook_endpoints" DROP COLUMN "secret_acknowledged"');
    await q.query('ALTER TABLE "webhook_endpoints" DROP COLUMN "secret_put_id"');
  }
}
