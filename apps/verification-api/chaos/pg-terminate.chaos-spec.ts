import { loadUnderTermination, openSqlProbe, runBounded, type SqlProbe } from '@tessera/testing';
import { type Credential, type Harness, INDIVIDUAL_LEVEL, startHarness } from '../test/harness';

/**
 * Chaos (issue 15): pg_terminate_backend on every connection of the verification API's pool (application
 * name verification-api) at seeded 150-450 ms intervals while REQUESTS `POST /v1/applicants` run with
 * bounded concurrency (and on, up to 10×, until a cut has failed one). Each request fails cleanly — 503 in the contract's `{message}` shape, no stack — or
 * succeeds; nothing is half-written (an applicant exists with its field claims, its applicant.created review
 * event and its outbox event, or none of them exists); the API recovers without a restart (each failed
 * request retried succeeds, a repeat answers 200 with the stored body). Bounded: 120 s.
 */
const REQUESTS = Number(process.env.CHAOS_PG_REQUESTS ?? 400);
const SEED = Number(process.env.CHAOS_SEED ?? 1795290019);
const PARALLEL = 8;
const UNAVAILABLE = { message: 'Service temporarily unavailable; retry with back-off' };

let h: Harness;
let key: Credential;
let probe: SqlProbe;

beforeAll(async () => {
  // The per-credential limit has its own test; here it would only turn retries into 429s.
  h = await startHarness({ RATE_LIMIT_PER_CREDENTIAL_PER_MINUTE: '100000' });
  let productId: string;
  ({ productId, key } = await h.tenant());
  await h.admin('post', `/products/${productId}/levels`, INDIVIDUAL_LEVEL);
  probe = await openSqlProbe(h.env.db.url, 'verification');
}, 60_000);

afterAll(async () => {
  await probe?.close();
  await h?.close();
});

interface Op {
  body: Record<string, string>;
  status?: number;
  text?: string;
  // The 201 answer, compared with later repeats.
  created?: Record<string, unknown>;
}

it(`${REQUESTS} POST /v1/applicants under pg_terminate_backend: 503 or success, nothing half-written, recovery without restart`, async () => {
  const t0 = Date.now();
  process.stdout.write(`chaos verification pg_terminate: seed ${SEED}, at least ${REQUESTS} requests\n`);
  const ops: Op[] = [];
  const send = (op: Op) => h.http().post('/v1/applicants').set(h.auth(key)).send(op.body);
  const { terminated, rounds } = await loadUnderTermination({
    probe,
    database: h.env.db.name,
    applicationName: 'verification-api',
    seed: SEED,
    minimum: REQUESTS,
    parallel: PARALLEL,
    send: async (i) => {
      const op: Op = (ops[i] = {
        body: {
          externalUserId: `pgt-${SEED}-${i}`,
          firstName: 'Ada',
          lastName: `Lovelace ${i}`,
          dateOfBirth: '1815-12-10',
          email: `ada${i}@example.com`,
        },
      });
      const res = await send(op);
      op.status = res.status;
      op.text = res.text;
      if (res.status === 201) op.created = res.body;
      return res.status === 503;
    },
  });

  const count = (s: number) => ops.filter((op) => op.status === s).length;
  expect(
    ops.filter((op) => op.status !== 201 && op.status !== 503).map((op) => `${op.status} ${op.text}`),
  ).toEqual([]);
  for (const op of ops.filter((o) => o.status === 503)) {
    expect(JSON.parse(op.text!)).toEqual(UNAVAILABLE);
    expect(op.text).not.toMatch(/\bat .*\.(js|ts)|stack|Connection terminated|57P01/i);
  }
  expect(terminated).toBeGreaterThan(0);
  expect(count(503)).toBeGreaterThan(0);
  expect(count(201)).toBeGreaterThan(0);

  // Nothing half-written: every applicant has its four field claims, one applicant.created review event and
  // one outbox event.
  const rows = await probe.query<{
    externalUserId: string;
    id: string;
    claims: number;
    reviews: number;
    events: number;
  }>(
    `SELECT a.external_user_id AS "externalUserId", a.id,
            (SELECT count(*)::int FROM field_claims c WHERE c.applicant_id = a.id) AS claims,
            (SELECT count(*)::int FROM review_events r WHERE r.applicant_id = a.id AND r.event_type = 'applicant.created') AS reviews,
            (SELECT count(*)::int FROM outbox o WHERE o.entity_type = 'applicant' AND o.entity_id = a.id::text) AS events
     FROM applicants a WHERE a.external_user_id LIKE 'pgt-%'`,
  );
  for (const r of rows) expect(r).toEqual({ ...r, claims: 4, reviews: 1, events: 1 });
  const byExternal = new Map(rows.map((r) => [r.externalUserId, r]));
  for (const op of ops.filter((o) => o.status === 201)) {
    expect(byExternal.get(op.body.externalUserId)?.id).toBe(op.created!.id);
  }
  const committedBut503 = ops.filter((o) => o.status === 503 && byExternal.has(o.body.externalUserId)).length;
  const [orphans] = await probe.query<{ claims: number; events: number }>(
    `SELECT (SELECT count(*)::int FROM field_claims c WHERE NOT EXISTS (SELECT 1 FROM applicants a WHERE a.id = c.applicant_id)) AS claims,
            (SELECT count(*)::int FROM outbox o WHERE o.entity_type = 'applicant' AND NOT EXISTS (SELECT 1 FROM applicants a WHERE a.id::text = o.entity_id)) AS events`,
  );
  expect(orphans).toEqual({ claims: 0, events: 0 });

  // Recovery without a restart: each failed request retried is created (or, if it had committed, answered
  // 200 with it), and each created one repeated answers 200 with the same body.
  const failed = ops.filter((o) => o.status === 503);
  const retried = await runBounded(failed.length, PARALLEL, (i) => send(failed[i]!));
  retried.forEach((res, i) => {
    const before = byExternal.get(failed[i]!.body.externalUserId);
    expect(res.status).toBe(before ? 200 : 201);
    if (before) expect(res.body.id).toBe(before.id);
  });
  const created = ops.filter((o) => o.status === 201);
  const repeats = await runBounded(created.length, PARALLEL, (i) => send(created[i]!));
  repeats.forEach((res, i) => {
    expect(res.status).toBe(200);
    expect(res.body).toEqual(created[i]!.created);
  });
  const [{ n }] = await probe.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM applicants WHERE external_user_id LIKE 'pgt-%'`,
  );
  expect(n).toBe(ops.length);
  process.stdout.write(
    `chaos verification pg_terminate: ${ops.length} requests (${count(201)}×201, ${count(503)}×503, 0 5xx other than 503), ` +
      `${terminated} connections terminated in ${rounds} rounds, ${committedBut503} committed before the cut, ` +
      `${failed.length} retried, ${repeats.length} repeats; ${Date.now() - t0} ms\n`,
  );
}, 120_000);
