import { Inject, Injectable } from '@nestjs/common';
import type { CustodyTransactionStatus } from '@tessera/contracts';
import { Batcher, type FollowUpJob, JobQueues } from '@tessera/platform';
import { CHAIN_ADAPTER, type ChainAdapter } from '../chain/chain-adapter';

/** The advance job of one step: a repeated enqueue of the same step is a no-op. */
export const advanceJobId = (transactionId: string, status: CustodyTransactionStatus) =>
  `adv-${transactionId}-${status}`;

/** How long a transaction stays in `status` before the machine moves it on. */
function stepDelayMs(chain: ChainAdapter, status: CustodyTransactionStatus, confirmations: number): number {
  return status === 'Confirming' ? chain.confirmationDelayMs(confirmations) : chain.stepDelayMs();
}

/**
 * The job that moves a transaction out of `status` once the chain's delay for that step has passed:
 * Confirming lasts its confirmations, every other step the chain's step delay. `elapsedMs` is how much of
 * the delay has already gone by (a step re-driven by the sweeper). Every enqueue of a step builds it here:
 * the worker's next step, the relay's first step (machine-start.ts), the sweeper's re-drive.
 */
export function advanceJob(
  chain: ChainAdapter,
  transactionId: string,
  status: CustodyTransactionStatus,
  confirmations = 0,
  elapsedMs = 0,
): FollowUpJob<'CUSTODY_TRANSACTION_ADVANCE'> {
  const delay = stepDelayMs(chain, status, confirmations);
  return {
    job: 'CUSTODY_TRANSACTION_ADVANCE',
    jobId: advanceJobId(transactionId, status),
    payload: { transactionId, expectedStatus: status },
    delayMs: Math.max(0, Math.round(delay - elapsedMs)),
  };
}

/**
 * Enqueues steps of the transaction machine (worker role). Enqueues that arrive together share one addBulk
 * round trip to Redis (libs/platform's Batcher); each caller still waits for its own job to be stored.
 */
@Injectable()
export class AdvanceEnqueuer {
  private readonly batches: Batcher<FollowUpJob<'CUSTODY_TRANSACTION_ADVANCE'>, void>;

  constructor(
    jobs: JobQueues,
    @Inject(CHAIN_ADAPTER) private readonly chain: ChainAdapter,
  ) {
    this.batches = new Batcher({
      run: async (items) => {
        await jobs.addBulk('CUSTODY_TRANSACTION_ADVANCE', items);
        return items.map(() => undefined);
      },
      maxConcurrentBatches: 4,
    });
  }

  /** True when the move out of `status` is due at once (the chain's pacing is 0): the worker runs it on. */
  dueNow(status: CustodyTransactionStatus, confirmations = 0): boolean {
    return stepDelayMs(this.chain, status, confirmations) <= 0;
  }

  /** Schedules the move out of `status`; see advanceJob for the delay. */
  enqueue(
    transactionId: string,
    status: CustodyTransactionStatus,
    confirmations = 0,
    elapsedMs = 0,
  ): Promise<void> {
    return this.batches.submit(advanceJob(this.chain, transactionId, status, confirmations, elapsedMs));
  }
}
