import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Inbox rows by arrival, for the retention pass (WEBHOOK_INBOX_RETENTION_HOURS, docs/decisions/0431). */
export class InboxRetention1795550000001 implements MigrationInterface {
  name = 'InboxRetention1795550000001';

  async up(q: QueryRunner): Promise<void> {
    await q.query('CREATE INDEX "received_events_received_idx" ON "received_events" ("received_at")');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP INDEX "received_events_received_idx"');
  }
}
