import { JOBS } from '@tessera/contracts';
import { JobQueues, withTimeout } from '@tessera/platform';
import { SETUP_HOOK_TIMEOUT_MS } from '@tessera/testing';
import { advanceJobId } from '../src/modules/transactions/advance-enqueuer';
import {
  ASSETS,
  client,
  type Client,
  createKey,
  createTenant,
  fundedWallet,
  type Harness,
  newIdempotencyKey,
  sql,
  startHarness,
  statusEvents as statusEventsOf,
  waitFor,
} from './support';

/**
 * Steps due at once run on in the job that made them due (decision 0424): with the chain's pacing at 0, a
 * transaction goes through its steps in one job, each step still its own commit with its own event; a step
 * that fails on the way is handed to the queue as a job of its own and retried there.
 */
let h: Harness;
let api: Client;
let wallets: { source: string; destination: string };

const STEPS = ['Submitted', 'PendingSignature', 'Broadcasting', 'Confirming'] as const;

beforeAll(async () => {
  // Each phase bounded apart, so a stall names itself instead of the hook's bare timeout (a CI run on a loaded
  // machine once ran out of the hook's 60 s with no word of where).
  h = await withTimeout(
    startHarness({ CHAIN_SIM_STEP_DELAY_MS: '0', CHAIN_SIM_BLOCK_MS: '0' }),
    90_000,
    'booting the API and the worker',
  );
  api = client(h.api, await createKey(h.api, await createTenant(h.api)));
  // The deposit behind the funding goes through the machine too (its last step has a ledger effect).
  const source = await withTimeout(fundedWallet(api, ASSETS.BTC, '1'), 30_000, 'funding the source wallet');
  const destination = await fundedWallet(api, ASSETS.BTC, undefined);
  wallets = { source: source.walletId, destination: destination.walletId };
}, SETUP_HOOK_TIMEOUT_MS);
afterAll(() => h?.close());

const advanceQueue = () => h.worker!.get(JobQueues).queue(JOBS.CUSTODY_TRANSACTION_ADVANCE.queue);

async function transfer(amount: string): Promise<string> {
  const res = await api
    .post(
      '/transactions/transfer',
      { sourceWalletId: wallets.source, destinationWalletId: wallets.destination, amount },
      { 'idempotency-key': newIdempotencyKey() },
    )
    .expect(201);
  return res.body.transactionId;
}

const completed = (id: string, timeoutMs = 10_000) =>
  waitFor(
    () => api.get(`/transactions/${id}`).then((r) => r.body.status as string),
    (s) => s === 'Completed',
    timeoutMs,
  );

const statusEvents = (id: string) => statusEventsOf(h, [id]);

describe('steps due at once run on in one job (custody worker)', () => {
  it('a transfer goes through its four steps in its first job, each step its own commit and event', async () => {
    const id = await transfer('0.01');
    await completed(id);
    // The contract's Completed: completedAt set; a transfer is off-chain and keeps txHash null.
    const { body } = await api.get(`/transactions/${id}`).expect(200);
    expect(typeof body.completedAt).toBe('string');
    expect(body.txHash).toBeNull();
    const events = await statusEvents(id);
    expect(events.map((e) => [e.previousStatus, e.status])).toEqual([
      ['Submitted', 'PendingSignature'],
      ['PendingSignature', 'Broadcasting'],
      ['Broadcasting', 'Confirming'],
      ['Confirming', 'Completed'],
    ]);
    // Gap-free after transaction.created (sequence 1).
    expect(events.map((e) => e.sequence)).toEqual([2, 3, 4, 5]);
    // created_at is the committing transaction's start: four steps, four commits.
    expect(new Set(events.map((e) => e.createdAt)).size).toBe(4);
    // Only the first step was a queue job; the later ones never were.
    const queue = advanceQueue();
    const states = await Promise.all(STEPS.map((s) => queue.getJobState(advanceJobId(id, s))));
    expect(states).toEqual(['completed', 'unknown', 'unknown', 'unknown']);
  });

  it('a step that fails on the way goes to the queue as its own job and completes there on a retry', async () => {
    // A transient failure of the database, for one amount only: the move into Broadcasting raises.
    await sql(
      h,
      `CREATE TABLE failing_amounts (amount numeric PRIMARY KEY);
       CREATE FUNCTION fail_into_broadcasting() RETURNS trigger LANGUAGE plpgsql AS $$
       BEGIN
         IF NEW.status = 'Broadcasting' AND EXISTS (SELECT 1 FROM failing_amounts WHERE amount = NEW.amount) THEN
           RAISE EXCEPTION 'injected failure';
         END IF;
         RETURN NEW;
       END $$;
       CREATE TRIGGER fail_into_broadcasting BEFORE UPDATE ON transactions
         FOR EACH ROW EXECUTE FUNCTION fail_into_broadcasting();
       INSERT INTO failing_amounts VALUES (777000);`,
    );
    try {
      const id = await transfer('0.00777');
      const queue = advanceQueue();
      // The run-on step failed in the first job; the step now has a job of its own, which fails and is retried.
      const job = await waitFor(
        async () => queue.getJob(advanceJobId(id, 'PendingSignature')),
        (j) => (j?.attemptsMade ?? 0) >= 1,
      );
      expect(job!.failedReason).toContain('injected failure');
      expect(await queue.getJobState(advanceJobId(id, 'Submitted'))).toBe('completed');
      const [row] = await sql<{ status: string }>(h, `SELECT status FROM transactions WHERE id = $1`, [id]);
      expect(row!.status).toBe('PendingSignature');
      // The failure clears; BullMQ's retry (backoff 1 s, then 2 s) takes the transaction to the end.
      await sql(h, `DELETE FROM failing_amounts`);
      await completed(id, 15_000);
      const events = await statusEvents(id);
      expect(events.map((e) => e.status)).toEqual([
        'PendingSignature',
        'Broadcasting',
        'Confirming',
        'Completed',
      ]);
      expect(events.map((e) => e.sequence)).toEqual([2, 3, 4, 5]);
    } finally {
      await sql(
        h,
        `DROP TRIGGER IF EXISTS fail_into_broadcasting ON transactions;
         DROP FUNCTION IF EXISTS fail_into_broadcasting();
         DROP TABLE IF EXISTS failing_amounts;`,
      );
    }
  }, 30_000);
});
