import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client } from 'pg';
import { outboxDataSource, POSTGRES_URL } from '../test/outbox-data-source';
import type { JobQueues } from './jobs';
import { OUTBOX_PENDING_QUEUE } from './outbox-pending.migration';
import { CLAIM_PLAN, claimStatement, OutboxRelay } from './outbox-relay';

/**
 * The relay's claim (decisions 0406, 0427): one statement takes the oldest queued rows off the pending queue and
 * answers their outbox rows, skipping rows another relay holds, and it is planned as an index scan of the queue's
 * `created_at` index however many dead entries that index still lists until vacuum. Real Postgres, the product's
 * queue and trigger.
 */
const schema = `claim_${randomUUID().replace(/-/g, '').slice(0, 12)}`;

let a: Client;
let b: Client;

const connect = async () => {
  const client = new Client({ connectionString: POSTGRES_URL });
  await client.connect();
  await client.query(`SET search_path = ${schema}`);
  return client;
};

/** `n` queued rows whose created_at follow each other by a millisecond, after every row there is. */
async function append(n: number): Promise<string[]> {
  const { rows } = await a.query<{ id: string }>(
    `INSERT INTO outbox (id, tenant_id, event_type, entity_type, entity_id, data, occurred_at, created_at)
     SELECT gen_random_uuid(), 't', 'e', 'x', i::text, '{}', now(),
            coalesce((SELECT max(created_at) FROM outbox), now()) + i * interval '1 ms'
       FROM generate_series(1, $1) i ORDER BY i RETURNING id`,
    [n],
  );
  return rows.map((r) => r.id);
}

/** A service pool (the product's settings) on the test schema, for a relay. */
const relayDataSource = (poolSize: number) => outboxDataSource(schema, poolSize).initialize();

/** Runs the claim in a transaction on `client` and leaves it open; answers the ids, oldest first. */
async function claim(client: Client, limit: number): Promise<string[]> {
  await client.query(`BEGIN; ${CLAIM_PLAN}`);
  const { rows } = await client.query<{ id: string; created_at: Date }>(claimStatement(limit));
  return rows.sort((x, y) => x.created_at.getTime() - y.created_at.getTime()).map((r) => r.id);
}

beforeAll(async () => {
  const admin = new Client({ connectionString: POSTGRES_URL });
  await admin.connect();
  await admin.query(`CREATE SCHEMA ${schema}`);
  await admin.query(`CREATE TABLE ${schema}.outbox (id uuid PRIMARY KEY, tenant_id text NOT NULL,
    event_type text NOT NULL, entity_type text NOT NULL, entity_id text NOT NULL, data jsonb NOT NULL,
    sequence bigint, occurred_at timestamptz NOT NULL, created_at timestamptz NOT NULL DEFAULT now(),
    relayed_at timestamptz) WITH (autovacuum_enabled = false)`);
  await admin.query(`SET search_path = ${schema}`);
  for (const sql of OUTBOX_PENDING_QUEUE) await admin.query(sql);
  await admin.query(`ALTER TABLE outbox_pending SET (autovacuum_enabled = false)`);
  await admin.end();
  [a, b] = await Promise.all([connect(), connect()]);
});

afterAll(async () => {
  await a?.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  await Promise.all([a?.end(), b?.end()]);
});

describe('the outbox claim', () => {
  it('takes the oldest queued rows off the queue; a relay in parallel takes the next ones', async () => {
    const ids = await append(7);
    const first = await claim(a, 3);
    const second = await claim(b, 3); // runs while `a` still holds its rows
    expect(first).toEqual(ids.slice(0, 3));
    expect(second).toEqual(ids.slice(3, 6));
    await a.query('ROLLBACK'); // a failed enqueue: the rows go back on the queue and are claimed again later
    await b.query('COMMIT');
    const { rows } = await a.query<{ id: string }>('SELECT id FROM outbox_pending ORDER BY created_at');
    expect(rows.map((r) => r.id)).toEqual([...ids.slice(0, 3), ids[6]]);
    expect(await claim(a, 10)).toEqual([...ids.slice(0, 3), ids[6]]);
    await a.query('COMMIT');
  });

  it("walks the queue's index with thousands of dead entries not yet vacuumed, and never writes the outbox", async () => {
    await append(5000);
    // As under load: the last analyze saw a few hundred rows waiting, so the planner expects about as many
    // queued rows (a bitmap scan and a sort look cheaper than walking the index for up to 500)...
    await a.query(
      `DELETE FROM outbox_pending p USING outbox o WHERE o.id = p.id AND o.entity_id::int <= 4800`,
    );
    await a.query('ANALYZE outbox_pending');
    // ...while the index still lists every row taken off the queue since the last vacuum.
    await a.query('DELETE FROM outbox_pending');
    const fresh = await append(5);
    const outboxWrites = async () => {
      const { rows } = await a.query<{ n: number }>(
        `SELECT (n_tup_upd + n_tup_del)::int AS n FROM pg_stat_xact_user_tables WHERE relid = 'outbox'::regclass`,
      );
      return rows[0]!.n;
    };
    await a.query(`BEGIN; ${CLAIM_PLAN}`);
    const { rows } = await a.query<{ 'QUERY PLAN': [{ Plan: PlanNode }] }>(
      `EXPLAIN (ANALYZE, FORMAT JSON) ${claimStatement(500)}`,
    );
    const written = await outboxWrites();
    await a.query('ROLLBACK');
    const nodes = flatten(rows[0]!['QUERY PLAN'][0].Plan);
    // The claim walks the queue's index in created_at order, deletes what it locked by ctid, and finds each
    // claimed outbox row by primary key.
    const scans = nodes.filter((n) => n['Node Type'].includes('Scan') && n['Node Type'] !== 'CTE Scan');
    expect(scans.map((n) => [n['Node Type'], n['Index Name']])).toEqual([
      ['Index Scan', 'outbox_pending_created_idx'],
      ['Tid Scan', undefined],
      ['Index Scan', 'outbox_pkey'],
    ]);
    expect(scans[0]!['Actual Rows']).toBe(fresh.length);
    expect(nodes[0]!['Actual Rows']).toBe(fresh.length);
    expect(written).toBe(0); // no update and no delete of an outbox row
  });

  it('a pass whose connection dies before its commit relays nothing; the next pass relays the rows', async () => {
    await a.query('DELETE FROM outbox_pending');
    const ids = await append(3);
    const ds = await relayDataSource(1);
    const enqueued: string[][] = [];
    let killNext = true;
    // The queue side is ours to script here: the first enqueue ends the relay's own backend before its COMMIT.
    const queues = {
      addBulk: async (_job: string, jobs: { payload: { events: { eventId: string }[] } }[]) => {
        enqueued.push(jobs.flatMap((j) => j.payload.events.map((e) => e.eventId)));
        if (killNext) {
          killNext = false;
          await b.query(
            `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
              WHERE application_name = $1 AND state = 'idle in transaction'`,
            [schema],
          );
        }
      },
    } as unknown as JobQueues;
    const relay = new OutboxRelay(ds, queues, {} as never, {} as never, { source: 'custody' });
    try {
      await expect(relay.relayBatch(500)).rejects.toThrow();
      const { rows } = await a.query('SELECT count(*)::int AS n FROM outbox_pending');
      expect(rows[0].n).toBe(3); // the delete from the queue died with the connection
      expect(await relay.relayBatch(500)).toBe(3); // on a new connection
      expect(enqueued).toEqual([ids, ids]); // enqueued again: BullMQ's job id and the inbox deduplicate
    } finally {
      await ds.destroy();
    }
  });
});

/** A relay on its own pool whose enqueues are recorded, one list of event ids per pass. */
async function recordingRelay(options: { minIntervalMs: number }) {
  const ds = await relayDataSource(2);
  const passes: string[][] = [];
  const queues = {
    addBulk: async (_job: string, jobs: { payload: { events: { eventId: string }[] } }[]) => {
      passes.push(jobs.flatMap((j) => j.payload.events.map((e) => e.eventId)));
    },
  } as unknown as JobQueues;
  const relay = new OutboxRelay(ds, queues, {} as never, {} as never, {
    source: 'custody',
    pollMs: 60_000,
    ...options,
  });
  return {
    relay,
    passes,
    relayed: () => passes.flat(),
    stop: async () => {
      await relay.onApplicationShutdown();
      await ds.destroy();
    },
  };
}

/** A producer that commits one row and wakes the relay every 5 ms for `ms` milliseconds; answers the ids. */
async function busyProducer(relay: OutboxRelay, ms: number): Promise<string[]> {
  const ids: string[] = [];
  const end = Date.now() + ms;
  while (Date.now() < end) {
    ids.push(...(await append(1)));
    relay.wake();
    await sleep(5);
  }
  return ids;
}

async function until(done: () => boolean, timeoutMs = 10_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!done()) {
    if (Date.now() > end) throw new Error('timed out');
    await sleep(10);
  }
}

describe("the relay's pace (decision 0418)", () => {
  beforeEach(() => a.query('DELETE FROM outbox_pending'));

  it("runs an idle relay's first wake at once, then one pass per interval while commits keep waking it", async () => {
    const paced = await recordingRelay({ minIntervalMs: 400 });
    try {
      const [first] = await append(1);
      const woken = Date.now();
      paced.relay.wake();
      await until(() => paced.relayed().includes(first!));
      expect(Date.now() - woken).toBeLessThan(400); // not held back by the interval
      const ids = await busyProducer(paced.relay, 1200);
      await until(() => ids.every((id) => paced.relayed().includes(id)));
      // 1.2 s of commits every ~5 ms: about one pass per 400 ms, each carrying every row committed meanwhile.
      expect(paced.passes.length - 1).toBeLessThanOrEqual(5);
      expect(paced.relayed().sort()).toEqual([first!, ...ids].sort()); // each row once
    } finally {
      await paced.stop();
    }
  });

  it('without an interval, runs a pass per wake that finds it idle (the control)', async () => {
    const eager = await recordingRelay({ minIntervalMs: 0 });
    try {
      const ids = await busyProducer(eager.relay, 1200);
      await until(() => ids.every((id) => eager.relayed().includes(id)));
      // Far more passes than the paced relay's at most 5 (about one per commit on an idle machine).
      expect(eager.passes.length).toBeGreaterThan(10);
      expect(eager.relayed().sort()).toEqual([...ids].sort());
    } finally {
      await eager.stop();
    }
  });
});

interface PlanNode {
  'Node Type': string;
  'Index Name'?: string;
  'Actual Rows'?: number;
  Plans?: PlanNode[];
}

const flatten = (node: PlanNode): PlanNode[] => [node, ...(node.Plans ?? []).flatMap(flatten)];
