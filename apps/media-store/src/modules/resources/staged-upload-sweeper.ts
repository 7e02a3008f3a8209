import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnModuleDestroy,
} from '@nestjs/common';
import { APP_CONFIG, RepeatingTask } from '@tessera/platform';
import type { Env } from '../../config/env';
import { ResourcesService } from './resources.service';

/**
 * Every MEDIA_STAGED_SWEEP_INTERVAL_MS, removes the bytes of staged uploads that were neither committed nor
 * discarded within MEDIA_STAGED_TTL_SECONDS (decision 0460): a verification-api that died, or whose commit or
 * discard failed, between the two halves of an upload. Replicas share the work (`FOR UPDATE SKIP LOCKED`). Then
 * the files of uploads a dead media-store left half-written, untouched as long (decision 0498).
 */
@Injectable()
export class StagedUploadSweeper implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger(StagedUploadSweeper.name);
  private readonly schedule: RepeatingTask;

  constructor(
    private readonly resources: ResourcesService,
    @Inject(APP_CONFIG) private readonly env: Env,
  ) {
    this.schedule = new RepeatingTask(
      env.MEDIA_STAGED_SWEEP_INTERVAL_MS,
      () => this.sweep(),
      (err) => this.logger.error({ err: err.message }, 'staged upload sweep failed'),
    );
  }

  onApplicationBootstrap(): void {
    this.schedule.start();
  }

  /** One sweep; answers how many staged uploads it removed. Leftovers of dead uploads go too (decision 0498). */
  async sweep(): Promise<number> {
    const removed = await this.resources.sweepStaged(() => !this.schedule.stopped);
    if (removed > 0) this.logger.log({ removed }, 'expired staged uploads removed');
    const leftovers = await this.resources.sweepLeftovers();
    if (leftovers > 0) this.logger.log({ leftovers }, 'files of uploads cut short by a dead process removed');
    return removed;
  }

  async onModuleDestroy(): Promise<void> {
    await this.schedule.stop();
  }
}
