import { randomUUID } from 'node:crypto';
import { Client } from 'pg';
import type { DataSource } from 'typeorm';
import { outboxDataSource, POSTGRES_URL } from '../test/outbox-data-source';
import { OutboxPendingQueue1795540000000 } from './outbox-pending.migration';
import { CLAIM_PLAN, claimStatement } from './outbox-relay';

/**
 * The move to the pending queue (decision 0427) on an outbox as the previous release left it: rows not yet
 * relayed are queued, a relay of the previous release finds nothing to relay twice, every later insert is queued
 * by the trigger in its own schema, and `down` gives the previous release its unrelayed rows back.
 */
const schema = `pending_${randomUUID().replace(/-/g, '').slice(0, 12)}`;

/** The claim of the previous release (decision 0406), as its relays run it during a rolling deploy. */
const PREVIOUS_CLAIM = `UPDATE outbox o SET relayed_at = now()
    FROM (SELECT id FROM outbox WHERE relayed_at IS NULL ORDER BY created_at LIMIT 500 FOR UPDATE SKIP LOCKED) c
   WHERE o.id = c.id RETURNING o.id`;

let admin: Client;
let ds: DataSource;

async function insert(relayed: boolean): Promise<string> {
  const id = randomUUID();
  await admin.query(
    `INSERT INTO outbox (id, tenant_id, event_type, entity_type, entity_id, data, occurred_at, sequence, relayed_at)
     VALUES ($1::uuid, 't', 'e', 'x', $1::text, '{}', now(), 1, ${relayed ? 'now()' : 'NULL'})`,
    [id],
  );
  return id;
}

const queued = async () =>
  (await admin.query<{ id: string }>('SELECT id FROM outbox_pending ORDER BY created_at')).rows.map(
    (r) => r.id,
  );

async function claim(sql: string): Promise<string[]> {
  await admin.query(`BEGIN; ${CLAIM_PLAN}`);
  const { rows } = await admin.query<{ id: string }>(sql);
  await admin.query('ROLLBACK');
  return rows.map((r) => r.id).sort();
}

async function migrate(direction: 'up' | 'down'): Promise<void> {
  const runner = ds.createQueryRunner();
  try {
    await new OutboxPendingQueue1795540000000()[direction](runner);
  } finally {
    await runner.release();
  }
}

beforeAll(async () => {
  admin = new Client({ connectionString: POSTGRES_URL });
  await admin.connect();
  await admin.query(`CREATE SCHEMA ${schema}`);
  await admin.query(`SET search_path = ${schema}`);
  await admin.query(`CREATE TABLE outbox (id uuid PRIMARY KEY, tenant_id text NOT NULL, event_type text NOT NULL,
    entity_type text NOT NULL, entity_id text NOT NULL, data jsonb NOT NULL, occurred_at timestamptz NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(), relayed_at timestamptz, sequence bigint NOT NULL)`);
  await admin.query('CREATE INDEX outbox_unrelayed_idx ON outbox (created_at) WHERE relayed_at IS NULL');
  await admin.query('CREATE INDEX outbox_relayed_idx ON outbox (relayed_at) WHERE relayed_at IS NOT NULL');
  ds = await outboxDataSource(schema, 1).initialize();
});

afterAll(async () => {
  await ds?.destroy();
  await admin?.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  await admin?.end();
});

describe('OutboxPendingQueue migration (decision 0427)', () => {
  it('queues the unrelayed rows, leaves the previous release nothing to claim, and goes back down', async () => {
    await insert(true);
    const waiting = [await insert(false), await insert(false)];
    await migrate('up');
    expect(await queued()).toEqual(waiting);
    expect(await claim(PREVIOUS_CLAIM)).toEqual([]);

    // A row inserted afterwards, as the previous release's API inserts it (relayed_at left to its default) and
    // from a session whose search_path is elsewhere: queued in the outbox's own schema, invisible to old relays.
    await admin.query('SET search_path = public');
    const id = randomUUID();
    await admin.query(
      `INSERT INTO ${schema}.outbox (id, tenant_id, event_type, entity_type, entity_id, data, occurred_at, sequence)
       VALUES ($1::uuid, 't', 'e', 'x', $1::text, '{}', now(), 1)`,
      [id],
    );
    await admin.query(`SET search_path = ${schema}`);
    expect(await queued()).toEqual([...waiting, id]);
    expect(await claim(PREVIOUS_CLAIM)).toEqual([]);
    expect(await claim(claimStatement(500))).toEqual([...waiting, id].sort());

    await migrate('down');
    expect(await claim(PREVIOUS_CLAIM)).toEqual([...waiting, id].sort());
    const { rows } = await admin.query(`SELECT to_regclass('outbox_pending') AS t`);
    expect(rows[0].t).toBeNull();
  });
});
