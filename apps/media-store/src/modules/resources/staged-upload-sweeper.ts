import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnModuleDestroy,
} from '@nestjs/common';
import { APP_CONFIG } from '@tessera/platform';
import type { Env } from '../../config/env';
import { ResourcesService } from './resources.service';

/**
 * Every MEDIA_STAGED_SWEEP_INTERVAL_MS, removes the bytes of staged uploads that were neither committed nor
 * discarded within MEDIA_STAGED_TTL_SECONDS (decision 0460): a verification-api that died, or whose commit or
 * discard failed, between the two halves of an upload. Replicas share the work (`FOR UPDATE SKIP LOCKED`).
 */
@Injectable()
export class StagedUploadSweeper implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger(StagedUploadSweeper.name);
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<unknown> | null = null;
  private stopped = false;

  constructor(
    private readonly resources: ResourcesService,
    @Inject(APP_CONFIG) private readonly env: Env,
  ) {}

  onApplicationBootstrap(): void {
    if (this.env.MEDIA_STAGED_SWEEP_INTERVAL_MS > 0) this.schedule();
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.running = this.sweep()
        .catch((err: Error) => this.logger.error({ err: err.message }, 'staged upload sweep failed'))
        .finally(() => {
          this.running = null;
          this.schedule();
        });
    }, this.env.MEDIA_STAGED_SWEEP_INTERVAL_MS);
    this.timer.unref();
  }

  /** One sweep; answers how many staged uploads it removed. */
  async sweep(): Promise<number> {
    const removed = await this.resources.sweepStaged(() => !this.stopped);
    if (removed > 0) this.logger.log({ removed }, 'expired staged uploads removed');
    return removed;
  }

  async onModuleDestroy(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running;
  }
}
