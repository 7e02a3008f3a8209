import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client } from 'pg';
import { outboxDataSource, POSTGRES_URL } from '../test/outbox-data-source';
import type { JobQueues } from './jobs';
import { CLAIM_PLAN, claimStatement, OutboxRelay } from './outbox-relay';

/**
 * The relay's claim (decision 0406): one statement claims and stamps the oldest unrelayed rows, skipping rows
 * another relay holds, and it is planned as an index scan of `outbox_unrelayed_idx` however many relayed rows
 * the index still lists until vacuum. Real Postgres, the product's partial index.
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

/** `n` unrelayed rows whose created_at follow each other by a millisecond, after every row there is. */
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
  await admin.query(
    `CREATE INDEX outbox_unrelayed_idx ON ${schema}.outbox (created_at) WHERE relayed_at IS NULL`,
  );
  await admin.end();
  [a, b] = await Promise.all([connect(), connect()]);
});

afterAll(async () => {
  await a?.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  await Promise.all([a?.end(), b?.end()]);
});

describe('the outbox claim', () => {
  it('takes the oldest unrelayed rows and stamps them; a relay in parallel takes the next ones', async () => {
    const ids = await append(7);
    const first = await claim(a, 3);
    const second = await claim(b, 3); // runs while `a` still holds its rows
    expect(first).toEqual(ids.slice(0, 3));
    expect(second).toEqual(ids.slice(3, 6));
    await a.query('ROLLBACK'); // a failed enqueue: the stamp goes, the rows are claimed again later
    await b.query('COMMIT');
    const { rows } = await a.query<{ id: string }>(
      'SELECT id FROM outbox WHERE relayed_at IS NULL ORDER BY created_at',
    );
    expect(rows.map((r) => r.id)).toEqual([...ids.slice(0, 3), ids[6]]);
    expect(await claim(a, 10)).toEqual([...ids.slice(0, 3), ids[6]]);
    await a.query('COMMIT');
  });

  it('is an index scan of outbox_unrelayed_idx with thousands of relayed rows not yet vacuumed', async () => {
    await append(5000);
    // As under load: the last analyze saw a few hundred rows waiting, so the planner expects about as many
    // unrelayed rows (a bitmap scan and a sort look cheaper than walking the index for up to 500)...
    await a.query(`UPDATE outbox SET relayed_at = now() WHERE relayed_at IS NULL AND entity_id::int <= 4800`);
    await a.query('ANALYZE outbox');
    // ...while the index still lists every row relayed since the last vacuum.
    await a.query('UPDATE outbox SET relayed_at = now() WHERE relayed_at IS NULL');
    const fresh = await append(5);
    await a.query(`BEGIN; ${CLAIM_PLAN}`);
    const { rows } = await a.query<{ 'QUERY PLAN': [{ Plan: PlanNode }] }>(
      `EXPLAIN (ANALYZE, FORMAT JSON) ${claimStatement(500)}`,
    );
    await a.query('ROLLBACK');
    const nodes = flatten(rows[0]!['QUERY PLAN'][0].Plan);
    // The claim walks the partial index in created_at order; each claimed row is found by primary key.
    expect(
      nodes.filter((n) => n['Node Type'].includes('Scan')).map((n) => [n['Node Type'], n['Index Name']]),
    ).toEqual([
      ['Subquery Scan', undefined],
      ['Index Scan', 'outbox_unrelayed_idx'],
      ['Index Scan', 'outbox_pkey'],
    ]);
    expect(nodes[0]!['Actual Rows']).toBe(fresh.length);
  });

  it('a pass whose connection dies before its commit relays nothing; the next pass relays the rows', async () => {
    await a.query('UPDATE outbox SET relayed_at = now() WHERE relayed_at IS NULL');
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
    const relay = new OutboxRelay(ds, queues, {} as never, { source: 'custody' });
    try {
      await expect(relay.relayBatch(500)).rejects.toThrow();
      const { rows } = await a.query('SELECT count(*)::int AS n FROM outbox WHERE relayed_at IS NULL');
      expect(rows[0].n).toBe(3); // the stamp died with the connection
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
  const relay = new OutboxRelay(ds, queues, {} as never, { source: 'custody', pollMs: 60_000, ...options });
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
  beforeEach(() => a.query('UPDATE outbox SET relayed_at = now() WHERE relayed_at IS NULL'));

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
