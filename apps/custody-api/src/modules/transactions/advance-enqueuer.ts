import { Inject, Injectable } from '@nestjs/common';
import { type CustodyTransactionStatus, JOBS, parseJobPayload } from '@tessera/contracts';
import { DEFAULT_JOB_OPTIONS, JobQueues } from '@tessera/platform';
import { CHAIN_ADAPTER, type ChainAdapter } from '../chain/chain-adapter';

/** The advance job of one step: a repeated enqueue of the same step is a no-op. */
export const advanceJobId = (transactionId: string, status: CustodyTransactionStatus) =>
  `adv-${transactionId}-${status}`;

interface Pending {
  transactionId: string;
  status: CustodyTransactionStatus;
  delay: number;
  resolve: () => void;
  reject: (err: unknown) => void;
}

/**
 * Enqueues the next step of the transaction machine. Requests arriving in the same event-loop turn share
 * one addBulk round trip to Redis; each caller still waits for its own job to be stored. Job ids are
 * `adv-<transactionId>-<status>`, so a repeated enqueue of one step is a no-op. The first step of a new
 * transaction is enqueued by the outbox relay instead (machine-start.ts).
 */
@Injectable()
export class AdvanceEnqueuer {
  private pending: Pending[] = [];
  private scheduled = false;

  constructor(
    private readonly jobs: JobQueues,
    @Inject(CHAIN_ADAPTER) private readonly chain: ChainAdapter,
  ) {}

  /** Schedules the move out of `status` after the chain's delay for it. */
  enqueue(transactionId: string, status: CustodyTransactionStatus, confirmations = 0): Promise<void> {
    const delay =
      status === 'Confirming' ? this.chain.confirmationDelayMs(confirmations) : this.chain.stepDelayMs();
    return new Promise((resolve, reject) => {
      this.pending.push({ transactionId, status, delay, resolve, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => void this.flush());
      }
    });
  }

  private async flush(): Promise<void> {
    const batch = this.pending;
    this.pending = [];
    this.scheduled = false;
    const job = JOBS.CUSTODY_TRANSACTION_ADVANCE;
    try {
      await this.jobs.queue(job.queue).addBulk(
        batch.map((p) => ({
          name: job.name,
          data: parseJobPayload(job, { transactionId: p.transactionId, expectedStatus: p.status }),
          opts: { ...DEFAULT_JOB_OPTIONS, delay: p.delay, jobId: advanceJobId(p.transactionId, p.status) },
        })),
      );
      for (const p of batch) p.resolve();
    } catch (err) {
      for (const p of batch) p.reject(err);
    }
  }
}
