import { UUID_V7, until } from '@tessera/testing';
import { ApplicantsRepository } from '../src/modules/applicants/applicants.repository';
import { type Credential, type Harness, INDIVIDUAL_LEVEL, startHarness } from './harness';

/**
 * POST /v1/applicants groups concurrent creates into one statement per batch (docs/decisions/0103).
 * Each caller must still get its own answer, as if the creates had run one by one.
 */
let h: Harness;
let key: Credential;

beforeAll(async () => {
  h = await startHarness();
  let productId: string;
  ({ productId, key } = await h.tenant());
  await h.admin('post', `/products/${productId}/levels`, INDIVIDUAL_LEVEL);
});
afterAll(() => h?.close());

const create = (body: Record<string, unknown>) => h.http().post('/v1/applicants').set(h.auth(key)).send(body);

/**
 * Sends `bodies` so that they queue up behind a batch the database is holding: a table lock stops the first
 * batch (the blockers), every create that reaches the batcher meanwhile waits behind it, and they go out
 * together, as one batch, once the lock is released. The lock is released only once every body has reached
 * the batcher (or was answered before it, like a 400), however long a loaded machine takes to get them there.
 */
async function sendAsOneBatch(bodies: Record<string, unknown>[]) {
  const submitted = jest.spyOn(h.app.get(ApplicantsRepository), 'create');
  let locked = false;
  try {
    await h.sql('BEGIN');
    locked = true;
    await h.sql('LOCK TABLE applicants IN SHARE MODE');
    // These take the batch slot and wait on the lock.
    const blockers = Promise.all([0, 1].map((i) => create({ externalUserId: `blocker-${Date.now()}-${i}` })));
    await until(
      async () => submitted.mock.calls.length,
      (n) => n === 2,
    );
    let answered = 0;
    const responses = Promise.all(
      bodies.map((body) =>
        create(body).then((r) => {
          answered++;
          return r;
        }),
      ),
    );
    // Nothing that reached the batcher can be answered while the lock holds: each body is either in the
    // batcher or answered already (refused at the edge).
    await until(
      async () => ({ submitted: submitted.mock.calls.length - 2, answered }),
      (n) => n.submitted + n.answered === bodies.length,
    );
    await h.sql('COMMIT');
    locked = false;
    await blockers;
    return await responses;
  } finally {
    // A wait that timed out must not leave the table locked for the tests after it.
    if (locked) await h.sql('ROLLBACK');
    submitted.mockRestore();
  }
}

describe('concurrent creates (group commit)', () => {
  it('each caller gets its own applicant; a duplicate in the same burst answers 200 with the same body', async () => {
    const ids = Array.from({ length: 20 }, (_, i) => `burst-${i}`);
    // Every id twice, in one batch.
    const responses = await sendAsOneBatch(
      [...ids, ...ids].map((id) => ({ externalUserId: id, firstName: `F-${id}`, email: `${id}@x.test` })),
    );
    for (const id of ids) {
      const pair = responses.filter((r) => r.body.externalUserId === id);
      expect(pair.map((r) => r.status).sort()).toEqual([200, 201]);
      expect(pair[0].body).toEqual(pair[1].body);
      expect(pair[0].body).toMatchObject({
        externalUserId: id,
        verificationLevelName: 'BASIC_KYC',
        status: 'init',
        lockedFields: ['email', 'firstName'],
        info: { firstName: `F-${id}`, email: `${id}@x.test` },
      });
    }
    const rows = await h.sql<{ id: string; created_at: Date }>(
      "SELECT id, created_at FROM applicants WHERE external_user_id LIKE 'burst-%'",
    );
    expect(rows).toHaveLength(20);
    const applicantIds = rows.map((r) => r.id);
    // One review event, one outbox row and the claims per applicant, each pointing at its own applicant.
    const events = await h.sql<{ applicant_id: string }>(
      "SELECT applicant_id FROM review_events WHERE applicant_id = ANY($1) AND event_type = 'applicant.created'",
      [applicantIds],
    );
    expect(events.map((e) => e.applicant_id).sort()).toEqual([...applicantIds].sort());
    const outbox = await h.sql<{
      id: string;
      entity_id: string;
      data: { externalUserId: string; applicantId: string };
    }>(
      "SELECT id, entity_id, data FROM outbox WHERE event_type = 'applicantCreated' AND entity_id = ANY($1)",
      [applicantIds],
    );
    expect(outbox).toHaveLength(20);
    for (const row of outbox) {
      // A time-ordered event id (decision 0432), made by the statement's uuidv7().
      expect(row.id).toMatch(UUID_V7);
      expect(row.data.applicantId).toBe(row.entity_id);
      expect(responses.find((r) => r.body.id === row.entity_id)?.body.externalUserId).toBe(
        row.data.externalUserId,
      );
    }
    const claims = await h.sql<{ n: string }>(
      'SELECT count(*) AS n FROM field_claims WHERE applicant_id = ANY($1)',
      [applicantIds],
    );
    expect(Number(claims[0].n)).toBe(40);
    // Rows of one statement share its transaction's timestamp: the whole burst, queued behind the held batch,
    // went out as one batch, not one commit per create.
    expect(new Set(rows.map((r) => r.created_at.getTime())).size).toBe(1);
  });

  it('one create with text Postgres cannot store answers 400; the creates beside it are not affected', async () => {
    const good = Array.from({ length: 10 }, (_, i) => `beside-${i}`);
    const [bad, ...rest] = await sendAsOneBatch([
      { externalUserId: 'nul-1', firstName: 'A\u0000B' },
      ...good.map((id) => ({ externalUserId: id, firstName: 'Fine' })),
    ]);
    expect(bad.status).toBe(400);
    // Refused at the platform's input edge (decision 0010), before it can reach the batch.
    expect(bad.body).toEqual({ message: expect.stringMatching(/NUL/) });
    expect(rest.map((r) => r.status)).toEqual(good.map(() => 201));
    expect(await h.sql("SELECT 1 FROM applicants WHERE external_user_id = 'nul-1'")).toHaveLength(0);
    const beside = await h.sql<{ created_at: Date }>(
      "SELECT created_at FROM applicants WHERE external_user_id LIKE 'beside-%'",
    );
    expect(beside).toHaveLength(10);
  });

  it('when the statement fails for every create (a table missing), every waiting caller gets 500 and nothing is half-written', async () => {
    await h.sql('ALTER TABLE review_events RENAME TO review_events_away');
    try {
      const responses = await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          create({ externalUserId: `down-${i}`, firstName: 'D' }).then((r) => r),
        ),
      );
      expect(responses.map((r) => r.status)).toEqual(responses.map(() => 500));
      expect(responses[0].body).toEqual({ message: 'Internal server error' });
    } finally {
      await h.sql('ALTER TABLE review_events_away RENAME TO review_events');
    }
    expect(await h.sql("SELECT 1 FROM applicants WHERE external_user_id LIKE 'down-%'")).toHaveLength(0);
    expect(await h.sql("SELECT 1 FROM outbox WHERE data->>'externalUserId' LIKE 'down-%'")).toHaveLength(0);
    // The next creates go through again.
    await create({ externalUserId: 'down-0', firstName: 'D' }).expect(201);
  });
});
