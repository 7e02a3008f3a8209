import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { ApplicantEventSequence1795530000000 } from '../src/database/migrations/1795530000000-ApplicantEventSequence';
import { COMPANY_LEVEL, type Credential, type Harness, INDIVIDUAL_LEVEL, startHarness } from './harness';

/**
 * Ordered webhooks in verification (decision 0225): an applicant's events are numbered 1..n without gaps, from
 * the applicant's own row (decision 0426), whichever path writes them and however many run at once.
 */
let h: Harness;
let key: Credential;

beforeAll(async () => {
  h = await startHarness();
  let productId: string;
  ({ productId, key } = await h.tenant());
  await h.admin('post', `/products/${productId}/levels`, INDIVIDUAL_LEVEL);
  await h.admin('post', `/products/${productId}/levels`, COMPANY_LEVEL);
}, 60_000);
afterAll(() => h?.close());

const createCompany = (externalUserId: string) =>
  h
    .http()
    .post('/v1/applicants')
    .set(h.auth(key))
    .send({ externalUserId, type: 'company', verificationLevelName: 'KYB_FULL', companyName: 'Acme Ltd' })
    .expect(201);

/** The applicant's event numbers in order, and its row's count. */
async function numbering(applicantId: string) {
  const events = await h.sql<{ sequence: number; event_type: string }>(
    `SELECT sequence::int, event_type FROM outbox WHERE entity_type = 'applicant' AND entity_id = $1
      ORDER BY sequence`,
    [applicantId],
  );
  const [row] = await h.sql<{ n: number }>('SELECT event_sequence::int AS n FROM applicants WHERE id = $1', [
    applicantId,
  ]);
  return { events, row: row!.n };
}

const applicantCounters = async () =>
  (
    await h.sql<{ n: number }>(
      "SELECT count(*)::int AS n FROM outbox_sequence WHERE entity_type = 'applicant'",
    )
  )[0]!.n;

describe('outbox sequence (verification)', () => {
  it('concurrent creates each start at 1; concurrent changes of one applicant number 2..n, gap-free', async () => {
    const created = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        h
          .http()
          .post('/v1/applicants')
          .set(h.auth(key))
          .send({ externalUserId: `seq-${i}` }),
      ),
    );
    expect(created.map((r) => r.status)).toEqual(Array(30).fill(201));
    for (const r of created) {
      expect(await numbering(r.body.id)).toEqual({
        events: [{ sequence: 1, event_type: 'applicantCreated' }],
        row: 1,
      });
    }

    const company = await createCompany('seq-co');
    const patches = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        h
          .http()
          .patch('/v1/applicants/seq-co/company-info')
          .set(h.auth(key))
          .send({ companyName: `Acme ${i}` }),
      ),
    );
    expect(patches.map((r) => r.status)).toEqual(Array(20).fill(200));
    const { events, row } = await numbering(company.body.id);
    expect(events.map((e) => e.sequence)).toEqual(Array.from({ length: 21 }, (_, i) => i + 1));
    expect(events[0]!.event_type).toBe('applicantCreated');
    expect(new Set(events.slice(1).map((e) => e.event_type))).toEqual(
      new Set(['applicantPersonalInfoChanged']),
    );
    expect(row).toBe(21);
    // No applicant is numbered from the counter table any more.
    expect(await applicantCounters()).toBe(0);
  }, 60_000);

  it('numbers an applicant event given without its number from the row; refuses one with no applicant', async () => {
    const insert = (entityType: string, entityId: string, eventType = 'test.event') =>
      h.sql<{ sequence: number }>(
        `INSERT INTO outbox (id, tenant_id, event_type, entity_type, entity_id, data, occurred_at)
         VALUES (gen_random_uuid(), 'tenant-x', $3, $1, $2, '{}', now()) RETURNING sequence::int`,
        [entityType, entityId, eventType],
      );
    await expect(insert('applicant', randomUUID())).rejects.toThrow(/has no row to number its event/);
    const company = await createCompany('seq-fallback');
    expect(await insert('applicant', company.body.id)).toEqual([{ sequence: 2 }]);
    expect((await numbering(company.body.id)).row).toBe(2);
    // The previous release's create gives no number: its created event is 1.
    expect(await insert('applicant', randomUUID(), 'applicantCreated')).toEqual([{ sequence: 1 }]);
    // Another entity type is still numbered from the counters.
    const other = randomUUID();
    expect(await insert('note', other)).toEqual([{ sequence: 1 }]);
    expect(await insert('note', other)).toEqual([{ sequence: 2 }]);
  });

  it('the migration moves existing applicants off the counter table and back', async () => {
    const created = await h
      .http()
      .post('/v1/applicants')
      .set(h.auth(key))
      .send({ externalUserId: 'seq-migrate-1' })
      .expect(201);
    const company = await createCompany('seq-migrate');
    await h
      .http()
      .patch('/v1/applicants/seq-migrate/company-info')
      .set(h.auth(key))
      .send({ companyName: 'Moved Ltd' })
      .expect(200);
    const runner = h.app.get(DataSource).createQueryRunner();
    const migration = new ApplicantEventSequence1795530000000();
    try {
      await migration.down(runner);
      const counter = await h.sql<{ last: number }>(
        `SELECT last_sequence::int AS last FROM outbox_sequence WHERE entity_type = 'applicant' AND entity_id = $1`,
        [company.body.id],
      );
      expect(counter).toEqual([{ last: 2 }]);
      await migration.up(runner);
    } finally {
      await runner.release();
    }
    expect((await numbering(company.body.id)).row).toBe(2);
    expect((await numbering(created.body.id)).row).toBe(1);
    expect(await applicantCounters()).toBe(0);
  }, 60_000);
});
