import { randomUUID } from 'node:crypto';
import { Client } from 'pg';
import { CLAIM_PLAN, claimStatement } from './outbox-relay';

/**
 * The relay's claim (decision 0406): one statement claims and stamps the oldest unrelayed rows, skipping rows
 * another relay holds, and it is planned as an index scan of `outbox_unrelayed_idx` however many relayed rows
 * the index still lists until vacuum. Real Postgres, the product's partial index.
 */
const POSTGRES_URL = process.env.TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
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
});

interface PlanNode {
  'Node Type': string;
  'Index Name'?: string;
  'Actual Rows'?: number;
  Plans?: PlanNode[];
}

const flatten = (node: PlanNode): PlanNode[] => [node, ...(node.Plans ?? []).flatMap(flatten)];
