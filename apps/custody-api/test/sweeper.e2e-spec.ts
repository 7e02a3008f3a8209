import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { JOBS } from '@tessera/contracts';
import { JobQueues } from '@tessera/platform';
import type { Queue } from 'bullmq';
import { UnrecoverableError } from 'bullmq';
import { DataSource } from 'typeorm';
import { advanceJobId } from '../src/modules/transactions/advance-enqueuer';
import { StuckTransactionSweeper } from '../src/modules/transactions/stuck-transaction-sweeper';
import { TransactionsProcessor } from '../src/modules/transactions/transactions.processor';
import {
  ASSETS,
  client,
  type Client,
  createKey,
  createTenant,
  fundedWallet,
  type Harness,
  sql,
  startHarness,
  waitFor,
  bootWorker,
} from './support';

const ADVANCE = JOBS.CUSTODY_TRANSACTION_ADVANCE;

let h: Harness;
let api: Client;
let queue: Queue;
let worker: NestFastifyApplication | undefined;

beforeAll(async () => {
  // No worker yet: each test arranges the queue before a worker sees it.
  h = await startHarness({}, { worker: false });
  api = client(h.api, await createKey(h.api, await createTenant(h.api)));
  queue = h.api.get(JobQueues, { strict: false }).queue(ADVANCE.queue);
});
afterAll(async () => {
  await worker?.close();
  await h?.close();
});

/**
 * A sandbox deposit of 1 BTC into a new wallet: Submitted, with its first step queued as the worker's
 * outbox relay queues it (and its outbox rows taken off the pending queue, so no relay queues it again).
 */
async function deposit() {
  const w = await fundedWallet(api, ASSETS.BTC, undefined);
  const dep = await api.post('/sandbox/deposits', { walletId: w.walletId, amount: '1' }).expect(201);
  const id: string = dep.body.transactionId;
  await sql(h, `DELETE FROM outbox_pending`);
  await h.api
    .get(JobQueues, { strict: false })
    .addBulk('CUSTODY_TRANSACTION_ADVANCE', [
      { jobId: advanceJobId(id, 'Submitted'), payload: { transactionId: id, expectedStatus: 'Submitted' } },
    ]);
  expect(await queue.getJobState(advanceJobId(id, 'Submitted'))).toBe('waiting');
  return { id, walletId: w.walletId };
}

const status = (id: string) => api.get(`/transactions/${id}`).then((r) => r.body.status as string);

async function expectCredited(walletId: string) {
  expect((await api.get(`/wallets/${walletId}/balance`)).body).toMatchObject({
    total: '1',
    available: '1',
    pending: '0',
  });
  const [sums] = await sql<{ total: string; pending: string }>(
    h,
    `SELECT sum(total_delta)::text AS total, sum(pending_delta)::text AS pending FROM ledger_entries
     WHERE wallet_id = $1`,
    [walletId],
  );
  expect(sums).toEqual({ total: '100000000', pending: '0' });
}

describe('stuck-transaction sweeper', () => {
  let lost: { id: string; walletId: string };
  let completedRecord: { id: string; walletId: string };
  let failedRecord: { id: string; walletId: string };
  let alive: { id: string; walletId: string };
  let sweeper: StuckTransactionSweeper;

  beforeAll(async () => {
    // 1. The job is gone, as after a crash between the commit and the enqueue.
    lost = await deposit();
    expect(await queue.remove(`adv-${lost.id}-Submitted`)).toBe(1);
    // 2. A completed job record with the step's id remains (BullMQ keeps the last 1000): the worker runs it
    //    while the row says PendingSignature (a no-op), then the row is put back to Submitted.
    completedRecord = await deposit();
    await sql(h, `UPDATE transactions SET status = 'PendingSignature' WHERE id = $1`, [completedRecord.id]);
    // 3. A failed job record: added again below, once the worker runs, and made to fail.
    failedRecord = await deposit();
    await queue.remove(`adv-${failedRecord.id}-Submitted`);
    // 4. A live job, delayed for a minute: slow, not stuck.
    alive = await deposit();
    await queue.remove(`adv-${alive.id}-Submitted`);
    await queue.add(
      ADVANCE.name,
      { transactionId: alive.id, expectedStatus: 'Submitted' },
      { jobId: `adv-${alive.id}-Submitted`, delay: 60_000 },
    );

    worker = await bootWorker(h, { CUSTODY_SWEEP_INTERVAL_MS: '0' });
    sweeper = worker.get(StuckTransactionSweeper, { strict: false });
    await waitFor(
      () => queue.getJobState(`adv-${completedRecord.id}-Submitted`),
      (s) => s === 'completed',
    );
    await sql(h, `UPDATE transactions SET status = 'Submitted' WHERE id = $1`, [completedRecord.id]);

    const processor = worker.get(TransactionsProcessor, { strict: false });
    const advance = processor.advance.bind(processor);
    const spy = jest.spyOn(processor, 'advance').mockImplementation(async (payload) => {
      if (payload.transactionId === failedRecord.id) throw new UnrecoverableError('simulated crash');
      return advance(payload);
    });
    try {
      await queue.add(
        ADVANCE.name,
        { transactionId: failedRecord.id, expectedStatus: 'Submitted' },
        { jobId: `adv-${failedRecord.id}-Submitted` },
      );
      await waitFor(
        () => queue.getJobState(`adv-${failedRecord.id}-Submitted`),
        (s) => s === 'failed',
      );
    } finally {
      spy.mockRestore();
    }
  });

  it('without a sweep nothing moves them: the transactions are stuck in Submitted', async () => {
    await new Promise((r) => setTimeout(r, 300));
    for (const t of [lost, completedRecord, failedRecord, alive])
      expect(await status(t.id)).toBe('Submitted');
  });

  it('one replica sweeps at a time: with the advisory lock held elsewhere a sweep does nothing', async () => {
    // Another replica's sweep, on a connection of its own.
    const other = h.api.get(DataSource).createQueryRunner();
    await other.connect();
    const lock = `hashtext('tessera:custody:stuck-sweep')`;
    try {
      await other.query(`SELECT pg_advisory_lock(${lock})`);
      expect(await sweeper.sweep(1)).toEqual({ swept: false, found: 0, requeued: 0 });
      expect(await queue.getJobState(`adv-${lost.id}-Submitted`)).toBe('unknown');
    } finally {
      await other.query(`SELECT pg_advisory_unlock(${lock})`);
      await other.release();
    }
  });

  it('a sweep above the age of every transaction finds nothing', async () => {
    expect(await sweeper.sweep(3_600_000)).toEqual({ swept: true, found: 0, requeued: 0 });
  });

  it('re-enqueues lost steps (missing, completed or failed job) and leaves a live job alone', async () => {
    const result = await sweeper.sweep(1);
    expect(result).toEqual({ swept: true, found: 4, requeued: 3 });
    for (const t of [lost, completedRecord, failedRecord]) {
      await waitFor(
        () => status(t.id),
        (s) => s === 'Completed',
      );
      await expectCredited(t.walletId);
    }
    expect(await status(alive.id)).toBe('Submitted');
    expect(await queue.getJobState(`adv-${alive.id}-Submitted`)).toBe('delayed');
    // Nothing is left to re-drive but the delayed one.
    expect(await sweeper.sweep(1)).toEqual({ swept: true, found: 1, requeued: 0 });
  });

  it('runs on its own every CUSTODY_SWEEP_INTERVAL_MS for transactions older than CUSTODY_SWEEP_AFTER_MS', async () => {
    await worker!.close();
    worker = undefined;
    const t = await deposit();
    await queue.remove(`adv-${t.id}-Submitted`);
    worker = await bootWorker(h, { CUSTODY_SWEEP_INTERVAL_MS: '100', CUSTODY_SWEEP_AFTER_MS: '300' });
    await waitFor(
      () => status(t.id),
      (s) => s === 'Completed',
    );
    await expectCredited(t.walletId);
    const [row] = await sql<{ age: number }>(
      h,
      `SELECT (extract(epoch FROM completed_at - created_at) * 1000)::int AS age FROM transactions WHERE id = $1`,
      [t.id],
    );
    expect(row.age).toBeGreaterThanOrEqual(300);
  });
});

describe('the sweeper index leaves the moves HOT (decision 0430)', () => {
  it('no index of transactions names a column that a move writes, but completed_at', async () => {
    const indexes = await sql<{ indexname: string; indexdef: string }>(
      h,
      `SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = 'custody' AND tablename = 'transactions'`,
    );
    expect(indexes.map((i) => i.indexname)).toContain('transactions_unfinished_idx');
    for (const { indexdef } of indexes)
      expect(indexdef).not.toMatch(
        /\b(status|updated_at|event_sequence|tx_hash|failure_reason|network_fee|fee_currency)\b/,
      );
  });

  it('a move that is not terminal is a HOT update; the terminal move leaves the unfinished index', async () => {
    // No worker: the deposit stays Submitted.
    await worker?.close();
    worker = undefined;
    const t = await deposit();
    await queue.remove(`adv-${t.id}-Submitted`);
    // The columns a move writes (TransactionsRepository.applyTransitions), in a transaction rolled back.
    const move = async (terminal: boolean) => {
      const runner = h.api.get(DataSource).createQueryRunner();
      await runner.startTransaction();
      // The backend's counts not yet flushed to the shared statistics: read before and after the move.
      const counts = async () =>
        (
          (await runner.query(
            `SELECT n_tup_upd::int AS "updated", n_tup_hot_upd::int AS "hot",
               (SELECT count(*)::int FROM transactions WHERE completed_at IS NULL AND id = $1) AS "unfinished"
             FROM pg_stat_xact_user_tables WHERE relid = 'custody.transactions'::regclass`,
            [t.id],
          )) as { updated: number; hot: number; unfinished: number }[]
        )[0]!;
      try {
        const before = await counts();
        await runner.query(
          `UPDATE transactions SET status = 'PendingSignature', updated_at = now(),
             event_sequence = event_sequence + 1, tx_hash = coalesce(tx_hash, 'h'),
             completed_at = ${terminal ? 'now()' : 'completed_at'} WHERE id = $1`,
          [t.id],
        );
        const after = await counts();
        return {
          updated: after.updated - before.updated,
          hot: after.hot - before.hot,
          unfinished: after.unfinished,
        };
      } finally {
        await runner.rollbackTransaction();
        await runner.release();
      }
    };
    expect(await move(false)).toEqual({ updated: 1, hot: 1, unfinished: 1 });
    expect(await move(true)).toEqual({ updated: 1, hot: 0, unfinished: 0 });
    expect(await status(t.id)).toBe('Submitted');
  });
});
