import { Injectable, Logger, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import { InjectEnv } from '../../common/config';
import type { Env } from '../../config/env';
import { ReconciliationRepository } from './reconciliation.repository';
import { ReconciliationService } from './reconciliation.service';

/**
 * Worker role: reconciles every CUSTODY_RECONCILE_INTERVAL_MS (default 10 min; 0 turns it off). One replica at
 * a time (advisory lock); the others skip that turn.
 */
@Injectable()
export class ReconciliationScheduler implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger(ReconciliationScheduler.name);
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<unknown> | null = null;
  private stopped = false;

  constructor(
    private readonly service: ReconciliationService,
    private readonly repository: ReconciliationRepository,
    @InjectEnv() private readonly env: Env,
  ) {}

  onApplicationBootstrap(): void {
    if (this.env.CUSTODY_RECONCILE_INTERVAL_MS > 0) this.schedule();
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.running = this.tick()
        .catch((err: Error) =>
          this.logger.error({ err: err.message }, 'scheduled custody reconciliation failed'),
        )
        .finally(() => {
          this.running = null;
          this.schedule();
        });
    }, this.env.CUSTODY_RECONCILE_INTERVAL_MS);
    this.timer.unref();
  }

  /** One scheduled run, unless another replica holds the lock; true when this one ran. */
  tick(): Promise<boolean> {
    return this.repository.withScheduleLock(async () => {
      await this.service.run('scheduled', null);
    });
  }

  async onModuleDestroy(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running;
  }
}
