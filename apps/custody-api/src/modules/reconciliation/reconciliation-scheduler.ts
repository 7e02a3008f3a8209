import { Injectable, Logger, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import { RepeatingTask } from '@tessera/platform';
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
  private readonly schedule: RepeatingTask;

  constructor(
    private readonly service: ReconciliationService,
    private readonly repository: ReconciliationRepository,
    @InjectEnv() private readonly env: Env,
  ) {
    this.schedule = new RepeatingTask(
      env.CUSTODY_RECONCILE_INTERVAL_MS,
      () => this.tick(),
      (err) => this.logger.error({ err: err.message }, 'scheduled custody reconciliation failed'),
    );
  }

  onApplicationBootstrap(): void {
    this.schedule.start();
  }

  /** One scheduled run, unless another replica holds the lock; true when this one ran. */
  tick(): Promise<boolean> {
    return this.repository.withScheduleLock(async () => {
      await this.service.run('scheduled', null);
    });
  }

  async onModuleDestroy(): Promise<void> {
    await this.schedule.stop();
  }
}
