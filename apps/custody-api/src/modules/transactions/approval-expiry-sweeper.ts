import { Injectable, Logger, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import { RepeatingTask } from '@tessera/platform';
import { InjectEnv } from '../../common/config';
import type { Env } from '../../config/env';
import { WithdrawalApprovalsRepository } from './withdrawal-approvals.repository';

const BATCH = 100;

/**
 * Worker role: every CUSTODY_APPROVAL_EXPIRY_INTERVAL_MS, withdrawals whose approval window has closed without
 * a quorum are Cancelled and their holds released (`transaction.status.updated` and `balance.updated` through the
 * outbox). Replicas share the work (`FOR UPDATE SKIP LOCKED`); a sweep repeats while it fills whole batches.
 */
@Injectable()
export class ApprovalExpirySweeper implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger(ApprovalExpirySweeper.name);
  private readonly schedule: RepeatingTask;

  constructor(
    private readonly approvals: WithdrawalApprovalsRepository,
    @InjectEnv() private readonly env: Env,
  ) {
    this.schedule = new RepeatingTask(
      env.CUSTODY_APPROVAL_EXPIRY_INTERVAL_MS,
      () => this.sweep(),
      (err) => this.logger.error({ err: err.message }, 'approval expiry sweep failed'),
    );
  }

  onApplicationBootstrap(): void {
    this.schedule.start();
  }

  /** One sweep; answers how many withdrawals it cancelled. */
  async sweep(): Promise<number> {
    let cancelled = 0;
    for (;;) {
      const ids = await this.approvals.expireDue(BATCH);
      cancelled += ids.length;
      for (const id of ids) this.logger.log({ transactionId: id }, 'withdrawal approval expired: cancelled');
      if (ids.length < BATCH || this.schedule.stopped) return cancelled;
    }
  }

  async onModuleDestroy(): Promise<void> {
    await this.schedule.stop();
  }
}
