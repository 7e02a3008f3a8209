import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { APP_CONFIG, ChannelListener, JobQueues, REDIS, settledUnlessRedisAway } from '@tessera/platform';
import type Redis from 'ioredis';
import type { Env } from '../../config/env';
import { CHECKS_CHANNEL } from './checks-channel';
import { ChecksRepository } from './checks.repository';

/**
 * Finds submitted steps and enqueues one check job per submission (job id = step id + submission time, so a
 * step found twice is enqueued once). It wakes on the NOTIFY the SDK repository sends after such a commit (decision 0407) and polls as a backstop, like the
 * outbox relay. It also schedules the enrollment expiry sweep. Any number of workers may run it: the job id
 * deduplicates, and the step's status is the real guard.
 */
@Injectable()
export class StepDiscoveryService implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(StepDiscoveryService.name);
  private readonly listener: ChannelListener;
  private timer: NodeJS.Timeout | null = null;
  private expiryTimer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private again = false;
  private stopped = false;

  constructor(
    private readonly repository: ChecksRepository,
    private readonly queues: JobQueues,
    @Inject(REDIS) private readonly redis: Redis,
    @Inject(APP_CONFIG) private readonly env: Env,
  ) {
    this.listener = new ChannelListener({
      databaseUrl: env.DATABASE_URL,
      channel: CHECKS_CHANNEL,
      applicationName: 'verification-worker-checks-listen',
      onNotify: () => this.wake(),
    });
  }

  async onApplicationBootstrap(): Promise<void> {
    this.expiryTimer = setInterval(() => void this.enqueueExpiry(), this.env.ENROLLMENT_EXPIRY_SWEEP_MS);
    await this.listener.start();
    this.wake();
  }

  /** Sweeps now (or right after the current sweep). */
  wake(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    if (this.timer) clearTimeout(this.timer);
    this.running = this.sweep().finally(() => {
      this.running = null;
      if (this.again) {
        this.again = false;
        this.wake();
      } else if (!this.stopped) {
        this.timer = setTimeout(() => this.wake(), this.env.CHECKS_POLL_MS);
      }
    });
  }

  private async sweep(): Promise<void> {
    try {
      const steps = await this.repository.submittedSteps(500);
      if (steps.length === 0) return;
      await this.queues.addBulk(
        'VERIFICATION_STEP_CHECK',
        steps.map((step) => ({
          jobId: `check.${step.stepId}.${step.submittedAt.replace(/\D/g, '')}`,
          payload: step,
        })),
      );
    } catch (err) {
      this.logger.error({ err: (err as Error).message }, 'submitted-step sweep failed; will retry');
    }
  }

  /**
   * One expiry sweep per interval across every worker: the job id is the interval's number, so the workers
   * that enqueue it in the same interval enqueue it once.
   */
  private async enqueueExpiry(): Promise<void> {
    const every = this.env.ENROLLMENT_EXPIRY_SWEEP_MS;
    try {
      await this.queues.addBulk('VERIFICATION_ENROLLMENT_EXPIRY', [
        { jobId: `expire.${every}.${Math.floor(Date.now() / every)}`, payload: { batchSize: 500 } },
      ]);
    } catch (err) {
      this.logger.error({ err: (err as Error).message }, 'could not enqueue the enrollment expiry sweep');
    }
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopped = true;
    if (this.expiryTimer) clearInterval(this.expiryTimer);
    if (this.timer) clearTimeout(this.timer);
    // A sweep stuck on a Redis that does not answer is left: its steps stay submitted for the next worker.
    await settledUnlessRedisAway(this.running, this.redis);
    await this.listener.stop();
  }
}
