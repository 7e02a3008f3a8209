import { v7 } from 'uuid';
import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A new id for a row of a table that only grows at its end (decision 0432): a version 7 UUID, whose first 48
 * bits are the Unix time in milliseconds, so that new keys land on the right edge of their B-tree index instead
 * of on a random leaf. `uuid` keeps ids from one process increasing within a millisecond too.
 */
export const timeOrderedId = (): string => v7();

/** The time a version 7 UUID carries (its first 48 bits, Unix milliseconds); null for any other id. */
export function timeOfOrderedId(id: string): Date | null {
  const hex = id.replace(/-/g, '');
  if (!/^[0-9a-f]{32}$/i.test(hex) || hex[12] !== '7') return null;
  return new Date(parseInt(hex.slice(0, 12), 16));
}

/**
 * `uuidv7()` for statements that make their ids in SQL: the same layout, with the milliseconds from
 * clock_timestamp() and the other 74 bits from gen_random_uuid(), whose version nibble becomes 7 (bits 52 and 53
 * of the 16 bytes) and whose variant bits are already those of RFC 9562. Created in the current schema, which
 * every service's search_path names first; Postgres 18's own `uuidv7()` in pg_catalog, which is searched before
 * it, has the same layout.
 */
export const CREATE_UUIDV7 = `DO $do$ BEGIN
  EXECUTE format($f$
    CREATE OR REPLACE FUNCTION %1$I.uuidv7() RETURNS uuid LANGUAGE sql VOLATILE PARALLEL SAFE AS $fn$
      SELECT encode(
        set_bit(set_bit(
          overlay(uuid_send(gen_random_uuid())
            PLACING substring(int8send(floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint) FROM 3)
            FROM 1 FOR 6),
          52, 1), 53, 1),
        'hex')::uuid
    $fn$$f$, current_schema());
  END $do$`;

export const DROP_UUIDV7 = 'DROP FUNCTION IF EXISTS uuidv7()';

/**
 * Gives a service's schema `uuidv7()` (decision 0432): the producers' outbox, transaction and ledger inserts use
 * it (listed in `outboxMigrations`, outbox-migrations.ts), and the dispatcher's delivery and attempt inserts
 * (listed in its own migrations).
 */
export class TimeOrderedIds1795560000000 implements MigrationInterface {
  name = 'TimeOrderedIds1795560000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(CREATE_UUIDV7);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(DROP_UUIDV7);
  }
}
