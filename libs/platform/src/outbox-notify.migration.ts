import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Makes every insert into a schema's `outbox` table wake that schema's outbox relay: a statement-level trigger
 * calls pg_notify on `tessera_outbox_<schema>` (see `outboxChannel`), which Postgres delivers at commit.
 * Living in the table rather than in `appendToOutbox` means producers that write outbox rows inside a larger
 * single statement (the custody transfer and verification create hot paths) wake the relay too.
 * Listed in `outboxMigrations` (outbox-migrations.ts).
 *
 * Superseded by DropOutboxNotifyTrigger (docs/decisions/0403): the NOTIFY in every producing commit
 * serialised those commits on Postgres' notify lock; producers now wake the relay after they commit.
 */
export class OutboxNotifyTrigger1795230000000 implements MigrationInterface {
  name = 'OutboxNotifyTrigger1795230000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE OR REPLACE FUNCTION outbox_notify() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM pg_notify('tessera_outbox_' || TG_TABLE_SCHEMA, '');
        RETURN NULL;
      END $$`);
    await q.query(
      'CREATE TRIGGER outbox_notify AFTER INSERT ON outbox FOR EACH STATEMENT EXECUTE FUNCTION outbox_notify()',
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TRIGGER IF EXISTS outbox_notify ON outbox');
    await q.query('DROP FUNCTION IF EXISTS outbox_notify()');
  }
}

/**
 * Drops OutboxNotifyTrigger: a commit that NOTIFYs holds Postgres' cluster-wide notify lock through its WAL
 * flush, so producing commits could not share flushes. Producers wake the relay after commit instead
 * (outbox-wake.ts, docs/decisions/0403). Listed in `outboxMigrations` (outbox-migrations.ts).
 */
export class DropOutboxNotifyTrigger1795480000000 implements MigrationInterface {
  name = 'DropOutboxNotifyTrigger1795480000000';

  async up(q: QueryRunner): Promise<void> {
    await new OutboxNotifyTrigger1795230000000().down(q);
  }

  async down(q: QueryRunner): Promise<void> {
    await new OutboxNotifyTrigger1795230000000().up(q);
  }
}
