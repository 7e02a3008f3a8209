import { Injectable, Logger, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
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
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<unknown> | null = null;
  private stopped = false;

  constructor(
    private readonly approvals: WithdrawalApprovalsRepository,
    @InjectEnv() private readonly env: Env,
  ) {}

  onApplicationBootstrap(): void {
    if (this.env.CUSTODY_APPROVAL_EXPIRY_INTERVAL_MS > 0) this.schedule();
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.running = this.sweep()
        .catch((err: Error) => this.logger.error({ err: err.message }, 'approval expiry sweep failed'))
        .finally(() => {
          this.running = null;
          this.schedule();
        });
    }, this.env.CUSTODY_APPROVAL_EXPIRY_INTERVAL_MS);
    this.timer.unref();
  }

  /** One sweep; answers how many withdrawals it cancelled. */
  async sweep(): Promise<number> {
    let cancelled = 0;
    for (;;) {
      const ids = await this.approvals.expireDue(BATCH);
      cancelled += ids.length;
      for (const id of ids) this.logger.log({ transactionId: id }, 'withdrawal approval expired: cancelled');
      if (ids.length < BATCH || this.stopped) return cancelled;
    }
  }

  async onModuleDestroy(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running;
  }
}
