import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnModuleDestroy,
} from '@nestjs/common';
import { JOBS } from '@tessera/contracts';
import { JobQueues, REDIS, RepeatingTask, settledUnlessRedisAway } from '@tessera/platform';
import type { JobState } from 'bullmq';
import type Redis from 'ioredis';
import { InjectEnv } from '../../common/config';
import type { Env } from '../../config/env';
import { AdvanceEnqueuer, advanceJobId } from './advance-enqueuer';
import { type StuckTransaction, StuckTransactionsRepository } from './stuck-transactions.repository';

/** A job in one of these states will still run: the transaction is slow, not stuck. */
const ALIVE: (JobState | 'unknown')[] = ['waiting', 'delayed', 'active', 'prioritized', 'waiting-children'];

const PAGE = 200;

/** What a pass left at shutdown fails with. */
const LEFT = new Error('stuck-transaction sweep left at shutdown');

export interface SweepResult {
  /** False when another replica held the sweep lock (nothing was looked at). */
  swept: boolean;
  /** In-flight transactions older than the threshold. */
  found: number;
  /** Of those, how many had no live job and got one. */
  requeued: number;
}

/**
 * Worker role: re-drives transactions whose next-step job was lost. The API and the worker commit a status
 * first and enqueue its next step after; a crash in between leaves the transaction in a non-terminal status
 * with no job. Every CUSTODY_SWEEP_INTERVAL_MS the sweeper looks at in-flight transactions untouched for
 * CUSTODY_SWEEP_AFTER_MS and, for each whose `adv-<id>-<status>` job is missing, completed or failed, removes
 * that job record and adds it again (BullMQ ignores an add whose id exists in any state, so a completed or
 * failed record would otherwise swallow the re-add). Re-running a step is safe: the processor's
 * compare-and-set makes a stale job a no-op. One replica sweeps at a time (advisory lock).
 *
 * At shutdown a pass that waits on a Redis that does not answer is left (decision 0496): it holds the sweep
 * lock's database connection while it asks Redis, so it is made to fail, its transaction rolls back and the
 * connection goes back before the pool closes. Nothing is lost: the transactions stay stuck in Postgres for the
 * next worker's sweep.
 */
@Injectable()
export class StuckTransactionSweeper implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger(StuckTransactionSweeper.name);
  private readonly schedule: RepeatingTask;
  /** Rejects once shutdown leaves the pass in flight; raced against the pass's Redis calls. */
  private readonly left: Promise<never>;
  private leave!: (reason: Error) => void;

  constructor(
    private readonly repository: StuckTransactionsRepository,
    private readonly jobs: JobQueues,
    private readonly enqueuer: AdvanceEnqueuer,
    @Inject(REDIS) private readonly redis: Redis,
    @InjectEnv() private readonly env: Env,
  ) {
    this.left = new Promise<never>((_, reject) => (this.leave = reject));
    this.left.catch(() => undefined);
    this.schedule = new RepeatingTask(
      env.CUSTODY_SWEEP_INTERVAL_MS,
      () => this.sweep(),
      (err) =>
        err === LEFT
          ? this.logger.warn('stuck-transaction sweep left at shutdown: Redis does not answer')
          : this.logger.error({ err: err.message }, 'stuck-transaction sweep failed'),
    );
  }

  onApplicationBootstrap(): void {
    this.schedule.start();
  }

  /** One sweep; `olderThanMs` defaults to CUSTODY_SWEEP_AFTER_MS. */
  async sweep(olderThanMs = this.env.CUSTODY_SWEEP_AFTER_MS): Promise<SweepResult> {
    const result: SweepResult = { swept: false, found: 0, requeued: 0 };
    result.swept = await this.repository.withSweepLock(async (pager) => {
      for (;;) {
        const page = await pager.next(olderThanMs, PAGE);
        result.found += page.length;
        result.requeued += await this.requeue(page);
        if (page.length < PAGE || this.schedule.stopped) return;
      }
    });
    if (result.requeued > 0) this.logger.warn(result, 're-enqueued lost transaction steps');
    return result;
  }

  private async requeue(page: StuckTransaction[]): Promise<number> {
    const queue = this.jobs.queue(JOBS.CUSTODY_TRANSACTION_ADVANCE.queue);
    const lost = (
      await this.unlessLeft(
        Promise.all(
          page.map(async (t) => {
            const jobId = advanceJobId(t.id, t.status);
            const state = await queue.getJobState(jobId);
            if (ALIVE.includes(state)) return undefined;
            if (state !== 'unknown') await queue.remove(jobId);
            return t;
          }),
        ),
      )
    ).filter((t): t is StuckTransaction => t !== undefined);
    // What is left of each step's normal delay (Confirming can outlast the threshold on a slow chain).
    await this.unlessLeft(
      Promise.all(lost.map((t) => this.enqueuer.enqueue(t.id, t.status, t.assetConfirmations, t.ageMs))),
    );
    return lost.length;
  }

  /** `redisWork`, unless shutdown leaves the pass first. */
  private unlessLeft<T>(redisWork: Promise<T>): Promise<T> {
    return Promise.race([redisWork, this.left]);
  }

  /**
   * Stops the timer and lets a running sweep finish before the queues and the database close, unless Redis does
   * not answer: then the sweep is left (it fails, and its transaction rolls back) instead of waited for.
   */
  async onModuleDestroy(): Promise<void> {
    const stopped = this.schedule.stop();
    await settledUnlessRedisAway(stopped, this.redis);
    this.leave(LEFT);
    await stopped;
  }
}
