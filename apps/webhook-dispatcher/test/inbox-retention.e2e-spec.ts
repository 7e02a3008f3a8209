import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { bootApp, createTestEnvironment, migratorFor, type TestEnvironment } from '@tessera/testing';
import { DataSource } from 'typeorm';
import { AppModule } from '../src/app.module';
import { loadEnv } from '../src/config/env';
import { databaseOptions } from '../src/database/database';
import { InboxRetention } from '../src/modules/events/inbox-retention';
import { planWithoutSeqScan } from './support/harness';

let env: TestEnvironment;
let app: NestFastifyApplication;
let db: DataSource;

beforeAll(async () => {
  env = await createTestEnvironment([
    migratorFor(databaseOptions, join(__dirname, '../src/database/migrations')),
  ]);
  app = await bootApp(AppModule.forRoot(loadEnv({ ...env.env, WEBHOOK_INBOX_RETENTION_HOURS: '24' })), {
    rpc: false,
  });
  db = app.get(DataSource);
});

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
    const holder = db.createQueryRunner();
    await holder.startTransaction();
    let deleted: number;
    try {
      await holder.query('SELECT 1 FROM received_events WHERE event_id = $1 FOR UPDATE', [old[2]]);
      deleted = await app.get(InboxRetention).prune();
    } finally {
      await holder.rollbackTransaction();
      await holder.release();
    }
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
