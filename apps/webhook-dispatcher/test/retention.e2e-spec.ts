// The dispatcher's retention passes: the inbox (decision 0431) and the delivery log (decision 0433).
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { bootApp, createTestEnvironment, migratorFor, type TestEnvironment } from '@tessera/testing';
import { DataSource } from 'typeorm';
import { AppModule } from '../src/app.module';
import { loadEnv } from '../src/config/env';
import { databaseOptions } from '../src/database/database';
import { DeliveriesRepository } from '../src/modules/deliveries/deliveries.repository';
import { DeliveryRetention } from '../src/modules/deliveries/delivery-retention';
import { InboxRetention } from '../src/modules/events/inbox-retention';
import { planWithoutSeqScan } from './support/harness';

let env: TestEnvironment;
let app: NestFastifyApplication;
let db: DataSource;

beforeAll(async () => {
  env = await createTestEnvironment([
    migratorFor(databaseOptions, join(__dirname, '../src/database/migrations')),
  ]);
  app = await bootApp(
    AppModule.forRoot(
      loadEnv({ ...env.env, WEBHOOK_INBOX_RETENTION_HOURS: '24', WEBHOOK_DELIVERY_RETENTION_DAYS: '30' }),
    ),
    {
      rpc: false,
    },
  );
  db = app.get(DataSource);
});

/** One pass of `retention` while another transaction holds the row of `table` whose `column` is `key`. */
async function pruneWhileHeld(
  retention: { prune(): Promise<number> },
  table: string,
  column: string,
  key: string,
): Promise<number> {
  const holder = db.createQueryRunner();
  await holder.startTransaction();
  try {
    await holder.query(`SELECT 1 FROM ${table} WHERE ${column} = $1 FOR UPDATE`, [key]);
    return await retention.prune();
  } finally {
    await holder.rollbackTransaction();
    await holder.release();
  }
}

afterAll(async () => {
  await app?.close();
  await env?.teardown();
});

/** An inbox row that arrived `age` ago. */
async function received(age: string): Promise<string> {
  const id = randomUUID();
  await db.query(
    `INSERT INTO received_events (event_id, source, tenant_id, event_type, entity_type, entity_id, data,
       occurred_at, received_at)
     VALUES ($1::uuid, 'custody', 'tenant-1', 'wallet.created', 'wallet', $1::text, '{}', now() - $2::interval,
       now() - $2::interval)`,
    [id, age],
  );
  return id;
}

describe('inbox retention (WEBHOOK_INBOX_RETENTION_HOURS)', () => {
  it('deletes the rows that arrived before the retention, however many, and keeps the rest', async () => {
    const old = await Promise.all(['25 hours', '30 days', '400 days'].map(received));
    const recent = await Promise.all(['1 minute', '23 hours'].map(received));
    // More than one statement's batch of 5,000: the pass goes on until none is left.
    await db.query(
      `INSERT INTO received_events (event_id, source, tenant_id, event_type, entity_type, entity_id, data,
         occurred_at, received_at)
       SELECT gen_random_uuid(), 'custody', 'tenant-1', 'wallet.created', 'wallet', 'w', '{}',
         now() - interval '2 days', now() - interval '2 days' - i * interval '1 second'
       FROM generate_series(1, 5001) AS i`,
    );
    // A row another replica's pass holds is skipped, not waited for, and not counted.
    const deleted = await pruneWhileHeld(app.get(InboxRetention), 'received_events', 'event_id', old[2]!);
    expect(deleted).toBe(5003);
    expect(await app.get(InboxRetention).prune()).toBe(1);
    expect(await app.get(InboxRetention).prune()).toBe(0);
    const left = await db.query('SELECT event_id FROM received_events WHERE event_id = ANY($1)', [
      [...old, ...recent],
    ]);
    expect(left.map((r: { event_id: string }) => r.event_id).sort()).toEqual([...recent].sort());
  });

  it('finds them through the arrival index', async () => {
    const plan = await planWithoutSeqScan(
      db,
      `SELECT event_id FROM received_events WHERE received_at < now() - make_interval(hours => 24)
       ORDER BY received_at LIMIT 5000`,
    );
    expect(plan).toContain('received_events_received_idx');
  });

  it('keeps every row when the retention is 0', async () => {
    // Built on its own rather than in a second booted app: closing a second app while its queue workers were
    // still connecting to Redis failed this file on a loaded machine ("Connection is closed").
    const keeper = new InboxRetention(db, loadEnv({ ...env.env, WEBHOOK_INBOX_RETENTION_HOURS: '0' }));
    keeper.onApplicationBootstrap();
    try {
      const id = await received('10 years');
      expect(await keeper.prune()).toBe(0);
      expect(await db.query('SELECT 1 FROM received_events WHERE event_id = $1', [id])).toHaveLength(1);
    } finally {
      await keeper.onApplicationShutdown();
      await db.query('DELETE FROM received_events');
    }
  });
});

/**
 * A delivery created `age` ago in `status`, last attempted `attempted` ago (none: never), with one attempt row
 * per attempt made.
 */
async function delivery(status: string, age: string, attempted: string | null = age): Promise<string> {
  const id = randomUUID();
  await db.query(
    `INSERT INTO webhook_deliveries (id, event_id, endpoint_id, tenant_id, source, event_type, entity_type,
       entity_id, payload, status, attempt_count, occurred_at, created_at, last_attempt_at, next_attempt_at)
     VALUES ($1, gen_random_uuid(), gen_random_uuid(), 'tenant-1', 'custody', 'wallet.created', 'wallet', 'w',
       '{}', $2, $4::int, now() - $3::interval, now() - $3::interval,
       CASE WHEN $4::int = 0 THEN NULL ELSE now() - $5::interval END,
       -- Due in an hour: the running poller must not attempt it (and write an attempt row) mid-test.
       CASE WHEN $2 IN ('pending', 'failed') THEN now() + interval '1 hour' END)`,
    [id, status, age, attempted === null ? 0 : 1, attempted ?? age],
  );
  if (attempted !== null)
    await db.query(
      `INSERT INTO webhook_attempts (delivery_id, attempt_number, request_url, duration_ms, attempted_at, success)
       VALUES ($1, 1, 'https://example.com/hook', 5, now() - $2::interval, $3)`,
      [id, attempted, status === 'delivered'],
    );
  return id;
}

const existing = async (table: 'webhook_deliveries' | 'webhook_attempts', ids: string[]) =>
  (
    await db.query<{ id: string }[]>(
      `SELECT ${table === 'webhook_deliveries' ? 'id' : 'delivery_id AS id'} FROM ${table}
        WHERE ${table === 'webhook_deliveries' ? 'id' : 'delivery_id'} = ANY($1)`,
      [ids],
    )
  )
    .map((r) => r.id)
    .sort();

describe('delivery retention (WEBHOOK_DELIVERY_RETENTION_DAYS)', () => {
  it('deletes finished deliveries past the retention with their attempts, however many, and keeps the rest', async () => {
    const old = [
      await delivery('delivered', '31 days'),
      await delivery('dead', '400 days'),
      await delivery('delivered', '5 years'),
    ];
    const kept = [
      await delivery('delivered', '29 days'),
      await delivery('dead', '1 hour'),
      // Still retrying, however old: never deleted.
      await delivery('pending', '200 days', null),
      await delivery('failed', '200 days', '199 days'),
      // Dead long ago, retried by an operator last week and dead again: its attempts are recent.
      await delivery('dead', '100 days', '7 days'),
    ];
    // More than one statement's batch of 5,000: the pass goes on until none is left.
    await db.query(
      `INSERT INTO webhook_deliveries (event_id, endpoint_id, tenant_id, source, event_type, entity_type, entity_id,
         payload, status, attempt_count, occurred_at, created_at, last_attempt_at)
       SELECT gen_random_uuid(), gen_random_uuid(), 'tenant-1', 'custody', 'wallet.created', 'wallet', 'w', '{}',
         'delivered', 1, now() - interval '60 days', now() - interval '60 days' - i * interval '1 second',
         now() - interval '60 days'
       FROM generate_series(1, 5001) AS i`,
    );
    // A delivery another replica's pass holds is skipped, not waited for, and not counted.
    const deleted = await pruneWhileHeld(app.get(DeliveryRetention), 'webhook_deliveries', 'id', old[2]!);
    expect(deleted).toBe(5003);
    expect(await app.get(DeliveryRetention).prune()).toBe(1);
    expect(await app.get(DeliveryRetention).prune()).toBe(0);
    expect(await existing('webhook_deliveries', [...old, ...kept])).toEqual([...kept].sort());
    // Attempts go with their delivery; the kept ones keep theirs (the pending one has none).
    expect(await existing('webhook_attempts', [...old, ...kept])).toEqual(
      kept.filter((id) => id !== kept[2]).sort(),
    );
  });

  it('finds them through the partial index of finished deliveries', async () => {
    const plan = await planWithoutSeqScan(
      db,
      `SELECT id FROM webhook_deliveries
        WHERE status IN ('delivered', 'dead') AND created_at < now() - make_interval(days => 30)
        ORDER BY created_at LIMIT 5000`,
    );
    expect(plan).toContain('webhook_deliveries_finished_idx');
  });

  it('keeps every delivery when the retention is 0', async () => {
    const keeper = new DeliveryRetention(db, loadEnv({ ...env.env, WEBHOOK_DELIVERY_RETENTION_DAYS: '0' }));
    keeper.onApplicationBootstrap();
    try {
      const id = await delivery('delivered', '10 years');
      expect(await keeper.prune()).toBe(0);
      expect(await existing('webhook_deliveries', [id])).toEqual([id]);
      expect(await existing('webhook_attempts', [id])).toEqual([id]);
    } finally {
      await keeper.onApplicationShutdown();
      await db.query('DELETE FROM webhook_attempts');
      await db.query('DELETE FROM webhook_deliveries');
    }
  });
});

/** A version 7 UUID carrying `ms` (the layout of timeOrderedId and uuidv7()). */
function idAt(ms: number): string {
  const random = randomUUID().replace(/-/g, '');
  const variant = ((parseInt(random[16]!, 16) & 3) | 8).toString(16);
  const hex = `${ms.toString(16).padStart(12, '0')}7${random.slice(13, 16)}${variant}${random.slice(17)}`;
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

describe('the delivery list across a retention pass', () => {
  it('a cursor whose delivery was deleted since goes on from the time its id carries', async () => {
    const tenant = `list-${randomUUID()}`;
    const start = Date.parse('2026-06-01T12:00:00.000Z');
    const ids = [0, 100, 200, 300].map((offset) => idAt(start + offset));
    for (let i = 0; i < ids.length; i++)
      await db.query(
        `INSERT INTO webhook_deliveries (id, event_id, endpoint_id, tenant_id, source, event_type, entity_type,
           entity_id, payload, status, attempt_count, occurred_at, created_at)
         VALUES ($1, gen_random_uuid(), gen_random_uuid(), $2, 'custody', 'wallet.created', 'wallet', 'w', '{}',
           'delivered', 1, $3::timestamptz, $3::timestamptz)`,
        [ids[i], tenant, new Date(start + i * 100).toISOString()],
      );
    const list = (cursor?: string) =>
      app.get(DeliveriesRepository).list(tenant, 'custody', { pageSize: 2, ...(cursor ? { cursor } : {}) });
    const idsOf = (rows: Awaited<ReturnType<typeof list>>) =>
      rows === 'bad-cursor' ? rows : rows.map((r) => r.id);
    expect(idsOf(await list())).toEqual([ids[3], ids[2], ids[1]]); // pageSize + 1: the service cuts the last
    expect(idsOf(await list(ids[2]))).toEqual([ids[1], ids[0]]);
    // The retention deletes the cursor's delivery between two pages.
    await db.query('DELETE FROM webhook_deliveries WHERE id = $1', [ids[2]]);
    expect(idsOf(await list(ids[2]))).toEqual([ids[1], ids[0]]);
    // An id that is not time-ordered and names no delivery of the tenant is still a bad cursor.
    expect(await list(randomUUID())).toBe('bad-cursor');
  });
});
