import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { ChannelListener, JobQueues, PacedTask, REDIS, settledUnlessRedisAway } from '@tessera/platform';
import type Redis from 'ioredis';
import { InjectEnv } from '../../common/config';
import type { Env } from '../../config/env';
import { APPROVED_STARTS_CHANNEL } from './approved-starts-channel';
import { type ApprovedStartCursor, WithdrawalApprovalsRepository } from './withdrawal-approvals.repository';

/** The advance job that starts an approved withdrawal (its own id: the creation's job already ran as a no-op). */
export const approvedStartJobId = (transactionId: string) => `adv-${transactionId}-Submitted-approved`;

/** The backstop poll, for a NOTIFY lost (a crash right after the vote's commit, a dropped LISTEN). */
export const APPROVED_STARTS_POLL_MS = 1000;

const BATCH = 500;

/**
 * Worker role: starts the machine of every approved withdrawal (decision 0491). The vote that reaches the
 * quorum commits the approval as `approved` with the withdrawal still `Submitted`, and that pair is the
 * work queue: a pass reads it from Postgres and enqueues each withdrawal's start job. The job id makes a
 * repeat a no-op, and the withdrawal's status is the real guard (once it leaves Submitted it is no longer
 * found). The API NOTIFYs after the commit, and a poll is the backstop, as for the outbox relay. The request
 * path so touches no queue: a Redis that hangs holds this pass, not the approval's answer, and the start goes
 * out once Redis answers again.
 */
@Injectable()
export class ApprovedStarts implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(ApprovedStarts.name);
  private readonly listener: ChannelListener;
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;
  private readonly passes = new PacedTask(
    async () => {
      if (this.timer) clearTimeout(this.timer);
      await this.pass();
    },
    () => {
      this.timer = setTimeout(() => this.wake(), APPROVED_STARTS_POLL_MS);
      this.timer.unref();
    },
  );

  constructor(
    private readonly approvals: WithdrawalApprovalsRepository,
    private readonly jobs: JobQueues,
    @Inject(REDIS) private readonly redis: Redis,
    @InjectEnv() env: Env,
  ) {
    this.listener = new ChannelListener({
      databaseUrl: env.DATABASE_URL,
      channel: APPROVED_STARTS_CHANNEL,
      applicationName: 'custody-worker-approved-starts-listen',
      onNotify: () => this.wake(),
    });
  }

  async onApplicationBootstrap(): Promise<void> {
    await this.listener.start();
    this.wake();
  }

  /** Runs a pass now, or right after the current one. */
  wake(): void {
    if (!this.stopped) this.passes.request(0);
  }

  /** Enqueues the start of every approved withdrawal still Submitted; returns how many it enqueued. */
  async pass(): Promise<number> {
    let enqueued = 0;
    let after: ApprovedStartCursor | undefined;
    try {
      for (;;) {
        const page = await this.approvals.approvedNotStarted(BATCH, after);
        if (page.length > 0) {
          await this.jobs.addBulk(
            'CUSTODY_TRANSACTION_ADVANCE',
            page.map(({ id: transactionId }) => ({
              jobId: approvedStartJobId(transactionId),
              payload: { transactionId, expectedStatus: 'Submitted' as const },
            })),
          );
        }
        enqueued += page.length;
        after = page.at(-1);
        if (page.length < BATCH || this.stopped) return enqueued;
      }
    } catch (err) {
      this.logger.warn({ err: (err as Error).message }, 'approved withdrawals not started yet; will retry');
      return enqueued;
    }
  }

  /**
   * Stops the passes. While Redis is away or hangs, the pass in flight is not waited for: its enqueue would
   * wait for Redis, and nothing is lost by leaving it, since the approved withdrawals stay in Postgres for the
   * next worker's pass (an enqueue that still reaches Redis later is a no-op by its job id).
   */
  async onApplicationShutdown(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await settledUnlessRedisAway(this.passes.stop(), this.redis);
    await this.listener.stop();
  }
}
