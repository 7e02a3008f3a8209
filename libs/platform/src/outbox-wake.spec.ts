import { randomUUID } from 'node:crypto';
import { Client } from 'pg';
import type { DataSource } from 'typeorm';
import { outboxDataSource, POSTGRES_URL } from '../test/outbox-data-source';
import { appendToOutbox } from './outbox';
import {
  DropOutboxNotifyTrigger1795480000000,
  OutboxNotifyTrigger1795230000000,
} from './outbox-notify.migration';
import { outboxChannel, paceOutboxWakes, registerLocalOutboxRelay, wakeOutboxRelay } from './outbox-wake';

/**
 * Producers wake the relay after commit (docs/decisions/0403): directly when a relay runs on the same
 * DataSource, else by a NOTIFY sent in its own statement, one at a time, with the wakes asked for meanwhile
 * folded into one follow-up. Real Postgres, a real LISTEN.
 */
const schema = `wake_${randomUUID().replace(/-/g, '').slice(0, 12)}`;

let admin: Client;
let listener: Client;
let notified: number;
/** performance.now() of each NOTIFY the listener received. */
let notifiedAt: number[];

const dataSource = () => outboxDataSource(schema, 4);

/** Runs `fn` with a fresh DataSource on the test schema, destroyed afterwards. */
async function withDataSource(fn: (ds: DataSource) => Promise<void>): Promise<void> {
  const ds = await dataSource().initialize();
  try {
    await fn(ds);
  } finally {
    await ds.destroy();
  }
}

const settle = () => new Promise((r) => setTimeout(r, 150));

beforeAll(async () => {
  admin = new Client({ connectionString: POSTGRES_URL });
  await admin.connect();
  await admin.query(`CREATE SCHEMA ${schema}`);
  await admin.query(`CREATE TABLE ${schema}.outbox (id uuid PRIMARY KEY, tenant_id text NOT NULL,
    event_type text NOT NULL, entity_type text NOT NULL, entity_id text NOT NULL, data jsonb NOT NULL,
    sequence bigint, occurred_at timestamptz NOT NULL, created_at timestamptz NOT NULL DEFAULT now(),
    relayed_at timestamptz)`);
  listener = new Client({ connectionString: POSTGRES_URL });
  await listener.connect();
  listener.on('notification', (n) => {
    if (n.channel !== outboxChannel(schema)) return;
    notified += 1;
    notifiedAt.push(performance.now());
  });
  await listener.query(`LISTEN "${outboxChannel(schema)}"`);
});

beforeEach(() => {
  notified = 0;
  notifiedAt = [];
});

/** Wakes the relay every 5 ms for `ms`; returns when the last wake was asked for. */
async function wakeEvery5ms(ds: DataSource, ms: number): Promise<number> {
  const end = performance.now() + ms;
  while (performance.now() < end) {
    wakeOutboxRelay(ds);
    await new Promise((r) => setTimeout(r, 5));
  }
  wakeOutboxRelay(ds);
  return performance.now();
}

afterAll(async () => {
  await listener?.end();
  await admin?.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  await admin?.end();
});

const event = () => ({
  tenantId: 't',
  eventType: 'wallet.created',
  entityType: 'wallet',
  entityId: randomUUID(),
  data: {},
});

describe('waking the outbox relay', () => {
  it('NOTIFYs once a transaction that appended events commits, and not before', () =>
    withDataSource(async (ds) => {
      await ds.transaction(async (manager) => {
        await appendToOutbox(manager, [event()]);
        await settle();
        expect(notified).toBe(0); // nothing before the commit
      });
      await settle();
      expect(notified).toBe(1);
    }));

  it('sends nothing for a rolled-back transaction', () =>
    withDataSource(async (ds) => {
      await ds
        .transaction(async (manager) => {
          await appendToOutbox(manager, [event()]);
          throw new Error('rollback');
        })
        .catch(() => undefined);
      await settle();
      expect(notified).toBe(0);
    }));

  it('folds wakes asked for while a NOTIFY is in flight into one follow-up', () =>
    withDataSource(async (ds) => {
      for (let i = 0; i < 100; i++) wakeOutboxRelay(ds);
      await settle();
      expect(notified).toBe(2); // the first, then one for the 99 that came while it was in flight
      wakeOutboxRelay(ds);
      await settle();
      expect(notified).toBe(3);
    }));

  it('runs a relay registered on the same DataSource directly, without a NOTIFY', async () => {
    const ds = await dataSource().initialize();
    let local = 0;
    const unregister = registerLocalOutboxRelay(ds, () => (local += 1));
    try {
      await ds.transaction((manager) => appendToOutbox(manager, [event()]));
      await appendToOutbox(ds.manager, [event()]); // autocommitted: woken at once
      await settle();
      expect(local).toBe(2);
      expect(notified).toBe(0);
      unregister();
      wakeOutboxRelay(ds);
      await settle();
      expect(local).toBe(2);
      expect(notified).toBe(1);
    } finally {
      unregister();
      await ds.destroy();
    }
  });

  it('a raw INSERT NOTIFYs nothing once DropOutboxNotifyTrigger has run (the old trigger did, in its commit)', async () => {
    const runner = { query: (sql: string) => admin.query(sql) } as never;
    const insert = (ds: DataSource) =>
      ds.query(
        `INSERT INTO outbox (id, tenant_id, event_type, entity_type, entity_id, data, occurred_at)
         VALUES (gen_random_uuid(), 't', 'x', 'y', 'z', '{}', now())`,
      );
    await admin.query(`SET search_path = ${schema}`);
    const ds = await dataSource().initialize();
    try {
      await new OutboxNotifyTrigger1795230000000().up(runner);
      await insert(ds);
      await settle();
      expect(notified).toBe(1);
      await new DropOutboxNotifyTrigger1795480000000().up(runner);
      await insert(ds);
      await settle();
      expect(notified).toBe(1); // the relay's backstop poll takes it
    } finally {
      await admin.query('RESET search_path');
      await ds.destroy();
    }
  });

  it('paces a busy producer to one NOTIFY per interval, the first at once and one after the last wake (decision 0419)', () =>
    withDataSource(async (ds) => {
      paceOutboxWakes(ds, 300);
      const start = performance.now();
      const lastWake = await wakeEvery5ms(ds, 1200);
      await new Promise((r) => setTimeout(r, 600));
      expect(notifiedAt[0] - start).toBeLessThan(150); // a quiet producer's first wake is not held
      expect(notified).toBeGreaterThanOrEqual(4); // about one per 300 ms over 1.2 s, not one per wake
      expect(notified).toBeLessThanOrEqual(6);
      expect(notifiedAt.at(-1)!).toBeGreaterThan(lastWake); // the last commit is not left to the poll
      for (let i = 1; i < notifiedAt.length; i++)
        expect(notifiedAt[i] - notifiedAt[i - 1]).toBeGreaterThan(200);
    }));

  it('without a pace, sends a NOTIFY per wake whenever none is in flight (the control)', () =>
    withDataSource(async (ds) => {
      await wakeEvery5ms(ds, 600);
      await settle();
      expect(notified).toBeGreaterThan(30);
    }));
});
