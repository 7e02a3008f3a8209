import type { MigrationInterface, QueryRunner } from 'typeorm';

/** The counter upsert as first written: the table named through TG_TABLE_SCHEMA, planned on every row. */
const ASSIGN_SEQUENCE_DYNAMIC = `CREATE OR REPLACE FUNCTION outbox_assign_sequence() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        EXECUTE format(
          'INSERT INTO %I.outbox_sequence AS s (tenant_id, entity_type, entity_id, last_sequence)
           VALUES ($1, $2, $3, 1)
           ON CONFLICT (tenant_id, entity_type, entity_id) DO UPDATE SET last_sequence = s.last_sequence + 1
           RETURNING last_sequence', TG_TABLE_SCHEMA)
          INTO NEW.sequence USING NEW.tenant_id, NEW.entity_type, NEW.entity_id;
        RETURN NEW;
      END $$`;

/**
 * Gives every outbox row a `sequence`: an integer that increases without gaps per (tenant, entityType,
 * entityId) (docs/decisions/0225). A BEFORE INSERT row trigger takes the next number from `outbox_sequence`
 * with `INSERT … ON CONFLICT DO UPDATE … RETURNING`, inside the producer's transaction: the counter row's lock
 * serialises concurrent writers of one entity until commit, and a rolled-back transaction rolls its number
 * back with it, so no gap is ever left. Living in the table (like OutboxNotifyTrigger) means producers that
 * insert outbox rows inside a larger single statement get numbers too. Existing rows are numbered in
 * `created_at` order. Listed in `outboxMigrations` (outbox-migrations.ts).
 */
export class OutboxSequence1795410000000 implements MigrationInterface {
  name = 'OutboxSequence1795410000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      'CREATE TABLE "outbox_sequence" ("tenant_id" text NOT NULL, "entity_type" text NOT NULL, "entity_id" text NOT NULL, "last_sequence" bigint NOT NULL, CONSTRAINT "outbox_sequence_pk" PRIMARY KEY ("tenant_id", "entity_type", "entity_id"))',
    );
    await q.query('ALTER TABLE "outbox" ADD "sequence" bigint');
    await q.query(`UPDATE "outbox" o SET "sequence" = n.seq FROM (
        SELECT id, row_number() OVER (PARTITION BY tenant_id, entity_type, entity_id ORDER BY created_at, id) AS seq
        FROM "outbox") n
      WHERE o.id = n.id`);
    await q.query(`INSERT INTO "outbox_sequence" (tenant_id, entity_type, entity_id, last_sequence)
      SELECT tenant_id, entity_type, entity_id, max("sequence") FROM "outbox" GROUP BY 1, 2, 3`);
    await q.query('ALTER TABLE "outbox" ALTER COLUMN "sequence" SET NOT NULL');
    // The counter table is named through TG_TABLE_SCHEMA: the trigger works whatever the session's search_path.
    await q.query(ASSIGN_SEQUENCE_DYNAMIC);
    await q.query(
      'CREATE TRIGGER outbox_assign_sequence BEFORE INSERT ON "outbox" FOR EACH ROW EXECUTE FUNCTION outbox_assign_sequence()',
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TRIGGER IF EXISTS outbox_assign_sequence ON "outbox"');
    await q.query('DROP FUNCTION IF EXISTS outbox_assign_sequence()');
    await q.query('ALTER TABLE "outbox" DROP COLUMN "sequence"');
    await q.query('DROP TABLE "outbox_sequence"');
  }
}

/**
 * The statement that (re)creates the current schema's `outbox_assign_sequence` with the counter table named
 * statically (`<schema>.outbox_sequence`, fixed when it runs). `rules` is PL/pgSQL run before the counter
 * upsert (a service's own numbering, decision 0425); it goes through `format()`, so `%1$I` names the schema and a
 * literal percent sign is written `%%`.
 */
export function assignSequenceStatic(rules = ''): string {
  return `DO $do$ BEGIN
      EXECUTE format($f$
        CREATE OR REPLACE FUNCTION %1$I.outbox_assign_sequence() RETURNS trigger LANGUAGE plpgsql AS $fn$
          BEGIN
            ${rules}
            INSERT INTO %1$I.outbox_sequence AS s (tenant_id, entity_type, entity_id, last_sequence)
            VALUES (NEW.tenant_id, NEW.entity_type, NEW.entity_id, 1)
            ON CONFLICT (tenant_id, entity_type, entity_id) DO UPDATE SET last_sequence = s.last_sequence + 1
            RETURNING last_sequence INTO NEW.sequence;
            RETURN NEW;
          END $fn$$f$, current_schema());
    END $do$`;
}

/** An entity whose events a service numbers from the entity's own row (decisions 0425, 0426). */
export interface RowNumberedEntity {
  /** The outbox `entity_type`, and the name the refusal gives it. */
  entityType: string;
  /** Its first event, which is always 1 (written in the statement that inserts the row). */
  createdEventType: string;
  /** The table (in the trigger's schema) whose `id` is the `entity_id` and whose `event_sequence` counts. */
  table: string;
  /** The table's column that holds the outbox `tenant_id`. */
  tenantColumn: string;
  /** The decision the refusal names. */
  decision: string;
}

/**
 * `rules` for `assignSequenceStatic`: a sequence the producer gave is kept; an event of `entity` given none is
 * numbered from its row (the created event is 1, any other bumps `event_sequence` and takes the result, under
 * the row lock its transaction already holds), and one whose row does not exist is refused. Other entities fall
 * through to the counter upsert.
 */
function rowNumberingRules(entity: RowNumberedEntity): string {
  return `
        IF NEW.sequence IS NOT NULL THEN
          RETURN NEW;
        END IF;
        IF NEW.entity_type = '${entity.entityType}' THEN
          IF NEW.event_type = '${entity.createdEventType}' THEN
            NEW.sequence := 1;
            RETURN NEW;
          END IF;
          UPDATE %1$I.${entity.table} SET event_sequence = event_sequence + 1 WHERE id = NEW.entity_id::uuid
            RETURNING event_sequence INTO NEW.sequence;
          IF NOT FOUND THEN
            RAISE EXCEPTION '${entity.entityType} %% has no row to number its event from (decision ${entity.decision})', NEW.entity_id;
          END IF;
          RETURN NEW;
        END IF;`;
}

/**
 * The `up` of a migration that numbers an entity's events from its rows (decisions 0425, 0426): adds
 * `event_sequence` (default 1, no table rewrite), copies each counter above 1 onto its row (the default holds the
 * rest), deletes the entity's counters and rewrites the trigger with `rowNumberingRules`.
 */
export async function numberEventsFromRows(q: QueryRunner, entity: RowNumberedEntity): Promise<void> {
  await q.query(`ALTER TABLE "${entity.table}" ADD "event_sequence" bigint NOT NULL DEFAULT 1`);
  await q.query(`UPDATE "${entity.table}" r SET "event_sequence" = s."last_sequence" FROM "outbox_sequence" s
    WHERE s."entity_type" = '${entity.entityType}' AND s."entity_id" = r."id"::text
      AND s."tenant_id" = r."${entity.tenantColumn}"::text AND s."last_sequence" <> 1`);
  await q.query(`DELETE FROM "outbox_sequence" WHERE "entity_type" = '${entity.entityType}'`);
  await q.query(assignSequenceStatic(rowNumberingRules(entity)));
}

/** The matching `down`: the plain counter trigger back, the counters restored from the rows, the column gone. */
export async function numberEventsFromCounters(q: QueryRunner, entity: RowNumberedEntity): Promise<void> {
  await q.query(assignSequenceStatic());
  await q.query(`INSERT INTO "outbox_sequence" ("tenant_id", "entity_type", "entity_id", "last_sequence")
    SELECT "${entity.tenantColumn}"::text, '${entity.entityType}', "id"::text, "event_sequence" FROM "${entity.table}"`);
  await q.query(`ALTER TABLE "${entity.table}" DROP COLUMN "event_sequence"`);
}

/**
 * Rewrites `outbox_assign_sequence` with the counter table named statically (`<schema>.outbox_sequence`,
 * fixed when the migration runs) instead of through `EXECUTE format(…, TG_TABLE_SCHEMA)`: PL/pgSQL plans a
 * static statement once per session and reuses it, where EXECUTE parsed and planned the upsert again for every
 * outbox row (20,000 rows in one INSERT: 650 ms before, 380–430 ms after). Still independent of the session's
 * search_path. Listed in `outboxMigrations` (outbox-migrations.ts).
 */
export class OutboxSequenceStatic1795500000000 implements MigrationInterface {
  name = 'OutboxSequenceStatic1795500000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(assignSequenceStatic());
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(ASSIGN_SEQUENCE_DYNAMIC);
  }
}
