import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Indexes relayed outbox rows by `relayed_at`, so that the relay's retention pass (OUTBOX_RETENTION_HOURS)
 * finds the old ones without scanning the table. Listed in `outboxMigrations` (outbox-migrations.ts).
 */
export class OutboxRetention1795490000000 implements MigrationInterface {
  name = 'OutboxRetention1795490000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      'CREATE INDEX "outbox_relayed_idx" ON "outbox" ("relayed_at") WHERE "relayed_at" IS NOT NULL',
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP INDEX "outbox_relayed_idx"');
  }
}
