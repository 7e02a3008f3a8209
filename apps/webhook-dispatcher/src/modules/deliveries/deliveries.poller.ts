import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnModuleDestroy,
} from '@nestjs/common';
import { APP_CONFIG } from '@tessera/platform';
import type { Env } from '../../config/env';
import { DeliveriesService } from './deliveries.service';

/** Runs due retries and takes over deliveries whose claim expired (a worker that crashed mid-attempt). */
@Injectable()
export class DeliveriesPoller implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger(DeliveriesPoller.name);
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private stopped = false;

  constructor(
    private readonly deliveries: DeliveriesService,
    @Inject(APP_CONFIG) private readonly env: Env,
  ) {}

  onApplicationBootstrap(): void {
    this.schedule(0);
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.running = this.tick().finally(() => {
        this.running = null;
      });
    }, ms);
  }

  private async tick(): Promise<void> {
    let full = false;
    try {
      const n = await this.deliveries.pollOnce();
      full = n >= this.env.WEBHOOK_CONCURRENCY;
    } catch (err) {
      this.logger.error({ err: (err as Error).message }, 'delivery poll failed');
    }
    this.schedule(full ? 0 : this.env.WEBHOOK_POLL_MS);
  }

  async onModuleDestroy(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running;
  }
}
