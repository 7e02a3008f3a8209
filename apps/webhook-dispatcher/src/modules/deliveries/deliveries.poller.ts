import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnModuleDestroy,
} from '@nestjs/common';
import { APP_CONFIG } from '@tessera/platform';
import type { Env } from '../../config/env';
import { DeliveriesService, mayTakePollerSlot } from './deliveries.service';

/**
 * Runs due retries and re-queues, and takes over deliveries whose claim expired (a worker that crashed
 * mid-attempt). It holds up to WEBHOOK_CONCURRENCY deliveries at once and claims more whenever slots are free:
 * each delivery's slot frees when its own attempt is recorded, so a slow receiver holds its own slots only, and
 * at most WEBHOOK_ENDPOINT_CONCURRENCY of them (decision 0455). The last slots are kept for endpoints holding
 * fewer, and each slot goes to the endpoint holding the fewest, so slow receivers with backlogs leave slots to a
 * healthy endpoint's retries (decision 0478).
 */
@Injectable()
export class DeliveriesPoller implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger(DeliveriesPoller.name);
  private timer: NodeJS.Timeout | null = null;
  private claiming: Promise<void> | null = null;
  /** Something asked for a claim while one was running: claim again when it ends. */
  private again = false;
  /** The last claim found deliveries (or no free slot): more may be due, so a freed slot claims at once. */
  private backlog = false;
  private stopped = false;
  /** Attempts in flight, and how many of them go to each endpoint. */
  private readonly inFlight = new Set<Promise<void>>();
  private readonly busy = new Map<string, number>();

  constructor(
    private readonly deliveries: DeliveriesService,
    @Inject(APP_CONFIG) private readonly env: Env,
  ) {}

  onApplicationBootstrap(): void {
    this.wake();
  }

  /** Claims now, or as soon as the claim in progress ends. */
  private wake(): void {
    if (this.stopped) return;
    if (this.claiming) {
      this.again = true;
      return;
    }
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.claiming = this.claim().finally(() => {
      this.claiming = null;
      if (this.again) {
        this.again = false;
        this.wake();
      }
    });
  }

  private async claim(): Promise<void> {
    const free = this.env.WEBHOOK_CONCURRENCY - this.inFlight.size;
    let claimed = 0;
    if (free > 0) {
      try {
        const started = await this.deliveries.claimDue(free, this.busy);
        for (const { endpointId, attempt } of started) this.track(endpointId, attempt);
        claimed = started.length;
      } catch (err) {
        this.logger.error({ err: (err as Error).message }, 'delivery poll failed');
      }
    }
    // Endpoints held back by their cap or the reserve (decision 0478) may take a slot once one frees.
    const heldBack = [...this.busy.values()].some((n) => !mayTakePollerSlot(this.env, n, free));
    this.backlog = free <= 0 || claimed > 0 || heldBack;
    // Free slots look again after the interval (deliveries falling due meanwhile); full ones when one frees.
    if (!this.stopped && free - claimed > 0)
      this.timer = setTimeout(() => this.wake(), this.env.WEBHOOK_POLL_MS);
  }

  private track(endpointId: string, attempt: Promise<unknown>): void {
    this.busy.set(endpointId, (this.busy.get(endpointId) ?? 0) + 1);
    const done: Promise<void> = attempt
      .then(
        () => undefined,
        // Its claim runs out and the delivery is taken over (decision 0452).
        (err: unknown) => this.logger.error({ err: (err as Error).message }, 'delivery attempt failed'),
      )
      .finally(() => {
        this.inFlight.delete(done);
        const left = this.busy.get(endpointId)! - 1;
        if (left > 0) this.busy.set(endpointId, left);
        else this.busy.delete(endpointId);
        if (this.backlog) this.wake();
      });
    this.inFlight.add(done);
  }

  async onModuleDestroy(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.claiming;
    await Promise.all([...this.inFlight]);
  }
}
