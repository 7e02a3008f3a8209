import { randomUUID } from 'node:crypto';
import { Client } from 'pg';
import { POSTGRES_URL } from '../test/outbox-data-source';
import { CREATE_UUIDV7, DROP_UUIDV7, timeOfOrderedId, timeOrderedId } from './time-ordered-ids';

/** RFC 9562 version 7: the version nibble 7, the variant bits 10. */
const V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
/** The Unix milliseconds in an id's first 48 bits. */
const millis = (id: string): number => timeOfOrderedId(id)!.getTime();

describe('timeOrderedId (decision 0432)', () => {
  it('makes version 7 UUIDs that carry the time and increase, within one millisecond too', () => {
    const before = Date.now();
    const ids = Array.from({ length: 5000 }, () => timeOrderedId());
    const after = Date.now();
    for (const id of ids) expect(id).toMatch(V7);
    expect(millis(ids[0]!)).toBeGreaterThanOrEqual(before);
    expect(millis(ids[ids.length - 1]!)).toBeLessThanOrEqual(after);
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
  });
});

describe('timeOfOrderedId', () => {
  it('reads the millisecond a version 7 id carries, and nothing from any other id', () => {
    const before = Date.now();
    const at = timeOfOrderedId(timeOrderedId())!.getTime();
    expect(at).toBeGreaterThanOrEqual(before);
    expect(at).toBeLessThanOrEqual(Date.now());
    expect(timeOfOrderedId('01890a5d-ac96-774b-bcce-b302099a8057')!.toISOString()).toBe(
      '2023-06-30T03:34:18.518Z',
    );
    expect(timeOfOrderedId(randomUUID())).toBeNull();
    expect(timeOfOrderedId('not-a-uuid')).toBeNull();
  });
});

describe('uuidv7() in SQL (decision 0432)', () => {
  const schema = `uuidv7_${randomUUID().replace(/-/g, '').slice(0, 12)}`;
  let db: Client;

  beforeAll(async () => {
    db = new Client({ connectionString: POSTGRES_URL });
    await db.connect();
    await db.query(`CREATE SCHEMA ${schema}`);
    await db.query(`SET search_path = ${schema}`);
    await db.query(CREATE_UUIDV7);
  });

  afterAll(async () => {
    await db.query(`DROP SCHEMA ${schema} CASCADE`);
    await db.end();
  });

  it('is created in the current schema and dropped from it', async () => {
    const where = async () =>
      (
        await db.query<{ schema: string }>(
          `SELECT n.nspname AS schema FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
           WHERE p.proname = 'uuidv7' AND n.nspname = $1`,
          [schema],
        )
      ).rows;
    expect(await where()).toEqual([{ schema }]);
    await db.query(DROP_UUIDV7);
    expect(await where()).toEqual([]);
    await db.query(CREATE_UUIDV7);
  });

  it('makes version 7 UUIDs with the clock in their first 48 bits, distinct, and ordered by time', async () => {
    const { rows } = await db.query<{ id: string; at: string }>(
      `SELECT uuidv7()::text AS id, (extract(epoch FROM clock_timestamp()) * 1000)::bigint::text AS at
       FROM generate_series(1, 20000)`,
    );
    for (const { id } of rows) expect(id).toMatch(V7);
    expect(new Set(rows.map((r) => r.id)).size).toBe(rows.length);
    for (const { id, at } of rows) expect(Math.abs(millis(id) - Number(at))).toBeLessThanOrEqual(50);
    // Ids made a few milliseconds apart sort by time (within one millisecond the rest is random).
    const apart = (
      await db.query<{ a: string; b: string }>(
        'SELECT uuidv7()::text AS a, (SELECT uuidv7()::text FROM pg_sleep(0.003)) AS b',
      )
    ).rows[0]!;
    expect(apart.a < apart.b).toBe(true);
  });

  it('agrees with timeOrderedId: ids from Node and from SQL made in turn sort in the order they were made', async () => {
    const made: string[] = [];
    for (let i = 0; i < 5; i++) {
      made.push(timeOrderedId());
      await new Promise((r) => setTimeout(r, 3));
      made.push((await db.query<{ id: string }>('SELECT uuidv7()::text AS id')).rows[0]!.id);
      await new Promise((r) => setTimeout(r, 3));
    }
    expect([...made].sort()).toEqual(made);
  });
});
