import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnModuleDestroy,
  SetMetadata,
} from '@nestjs/common';
import { DiscoveryService, MetadataScanner, Reflector } from '@nestjs/core';
import {
  assertJobCoverage,
  jobDefinition,
  type JobDefinition,
  JobPayloadError,
  JOBS,
  type JobKey,
  type JobPayload,
  parseJobPayload,
  type QueueName,
} from '@tessera/contracts';
import {
  type AdvancedOptions,
  type Job,
  type JobsOptions,
  type MinimalJob,
  Queue,
  RedisConnection,
  UnrecoverableError,
  Worker,
  type WorkerOptions,
} from 'bullmq';
import type Redis from 'ioredis';
import { bullPrefix, connectionErrorLog, isConnectionError, probeUnreachable } from './redis';
import { PLATFORM_OPTIONS, REDIS, type PlatformOptions } from './tokens';

const PROCESS_JOB = Symbol('tessera:process-job');

/** Marks a provider method as the one processor of a job. Its argument is the parsed payload. */
export const ProcessJob = (job: { name: string }) => SetMetadata(PROCESS_JOB, job.name);

/**
 * Stalled-job recovery for consumers whose jobs are idempotent and never block the event loop for seconds: a
 * 15 s lock (BullMQ renews it every 7.5 s while the job runs) and a stalled-job check every 5 s, so a job held by
 * a worker that died runs again within about 25 s instead of about a minute with BullMQ's 30 s and 30 s. The
 * custody worker and the webhook dispatcher use it (docs/reliability.md).
 */
export const QUICK_STALL_RECOVERY = { lockDurationMs: 15_000, stalledIntervalMs: 5_000 } as const;

/**
 * How long a shutdown waits for a queue's or a worker's Redis connections to finish connecting before it closes
 * them (closeWhenConnected). Only a Redis that does not answer makes the wait that long.
 */
export const CONNECT_SETTLE_MS = 2000;

/**
 * Closes a BullMQ queue or worker once its connections have finished connecting (decision 0465). BullMQ opens
 * them in the background: a worker's blocking connection (a duplicate of the shared one) connects and then asks
 * Redis for its version (INFO), which takes a few milliseconds after the worker is created, so right after boot.
 * Closed in that moment, BullMQ disconnects it with the INFO still on its way and drops the connection's error
 * listeners; the INFO's rejection ("Connection is closed.") is then emitted as an `error` no one listens to, and
 * Node exits 1 with its stack on stderr (taskforcesh/bullmq#3546). Waiting for the connection first makes the
 * close an ordinary QUIT. A Redis that does not answer is waited for at most CONNECT_SETTLE_MS; a connection
 * that failed has already reported its error to the worker's own listener.
 */
export async function closeWhenConnected(
  target: Pick<Queue | Worker, 'waitUntilReady' | 'close'>,
  settleMs = CONNECT_SETTLE_MS,
): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    target.waitUntilReady().catch(() => undefined),
    new Promise((resolve) => (timer = setTimeout(resolve, settleMs))),
  ]).finally(() => clearTimeout(timer));
  await target.close();
}

/**
 * BullMQ's Redis connection, except that an `error` it emits once close() has taken its listeners off is dropped
 * instead of thrown (decision 0492). A queue or worker asks Redis for its version (INFO) when it is created; one
 * first used while Redis hangs is still waiting for that answer when the shutdown closes it. The shutdown then
 * ends the service's connection, the INFO fails with "Connection is closed.", and BullMQ emits that failure on a
 * connection no one listens to any more: Node exited 1 with the stack on stderr. Nothing is lost by dropping it:
 * the queue is closed, and the failure is of a question no one waits for.
 */
export class QuietAfterCloseConnection extends RedisConnection {
  override emit(event: string | symbol, ...args: unknown[]): boolean {
    if (event === 'error' && this.closing && this.listenerCount('error') === 0) return false;
    return super.emit(event, ...args);
  }
}

/**
 * A BullMQ worker whose connections are QuietAfterCloseConnection's: the shared one through the constructor's
 * `Connection` argument, and the blocking one, a duplicate BullMQ creates itself and keeps private, by giving it
 * the same `emit` (decision 0492).
 */
export function createWorker(
  queue: string,
  processor: (job: Job) => Promise<unknown>,
  options: WorkerOptions,
): Worker {
  const worker = new Worker(queue, processor, options, QuietAfterCloseConnection);
  const blocking = (worker as unknown as { blockingConnection?: RedisConnection }).blockingConnection;
  if (blocking) blocking.emit = QuietAfterCloseConnection.prototype.emit;
  return worker;
}

/** Longest wait between two attempts of a job (the back-off doubles from its first delay up to this). */
export const JOB_RETRY_MAX_DELAY_MS = 60_000;

/**
 * The wait before attempt `attemptsMade + 1`: the first delay doubled per attempt, capped at a minute, with
 * ±10 % jitter so that jobs failed together do not come back together.
 */
export function cappedBackoffMs(attemptsMade: number, firstDelayMs: number): number {
  const delay = Math.min(firstDelayMs * 2 ** Math.max(0, attemptsMade - 1), JOB_RETRY_MAX_DELAY_MS);
  return Math.round(delay * (0.9 + Math.random() * 0.2));
}

/** BullMQ's custom back-off strategies (Worker `settings`): `capped-exponential` (cappedBackoffMs). */
export const WORKER_SETTINGS: AdvancedOptions = {
  backoffStrategy: (attemptsMade: number, type?: string, _err?: Error, job?: MinimalJob): number => {
    if (type !== 'capped-exponential') return 0;
    const first = Number((job?.opts.backoff as { delay?: number } | undefined)?.delay ?? 1000);
    return cappedBackoffMs(attemptsMade, first);
  },
};

/**
 * A job that fails for a reason that passes (its database or media-store away for a minute, a node that
 * rate-limits) is retried until it succeeds: about two weeks of attempts, a minute apart once the back-off
 * reaches its cap. Five attempts (about 15 s) used to be the limit, and a job that ran out was kept failed
 * and never run again: a webhook batch whose events had already left the outbox was lost, and a verification
 * step stayed `in_review` for ever (decision 0438). A payload that does not parse still fails at once
 * (UnrecoverableError: dead-lettered, never retried).
 */
export const DEFAULT_JOB_OPTIONS: JobsOptions = {
  attempts: 20_000,
  backoff: { type: 'capped-exponential', delay: 1000 },
  removeOnComplete: { count: 1000 },
  removeOnFail: { age: 7 * 24 * 3600 },
};

/** Producer side: payloads are validated before they are enqueued. */
@Injectable()
export class JobQueues implements OnModuleDestroy {
  private readonly queues = new Map<QueueName, Queue>();

  constructor(
    @Inject(REDIS) private readonly redis: Redis,
    @Inject(PLATFORM_OPTIONS) private readonly options: PlatformOptions,
  ) {}

  queue(name: QueueName): Queue {
    let queue = this.queues.get(name);
    if (!queue) {
      queue = new Queue(
        name,
        {
          connection: this.redis,
          prefix: bullPrefix(this.options.env.QUEUE_PREFIX),
          defaultJobOptions: DEFAULT_JOB_OPTIONS,
        },
        QuietAfterCloseConnection,
      );
      this.queues.set(name, queue);
    }
    return queue;
  }

  async add<K extends JobKey>(key: K, payload: JobPayload<K>, opts: JobsOptions = {}): Promise<void> {
    const job: JobDefinition = JOBS[key];
    const data = parseJobPayload(job, payload);
    await this.queue(job.queue).add(job.name, data, opts);
  }

  /**
   * Several jobs of one kind in one Redis round trip. One job (what an outbox relay pass usually has) is
   * added without a pipeline: BullMQ's addBulk builds an ioredis pipeline, which copies every one of BullMQ's
   * Lua commands onto a new object, and that cost about 70 µs of CPU more per call than `add` (decision
   * 0410). Both run the same script, so a job id already queued is dropped the same way.
   */
  async addBulk<K extends JobKey>(
    key: K,
    items: { payload: JobPayload<K>; jobId?: string; delayMs?: number }[],
  ): Promise<void> {
    const job: JobDefinition = JOBS[key];
    const jobs = items.map((item) => ({
      name: job.name,
      data: parseJobPayload(job, item.payload),
      opts: { jobId: item.jobId, ...(item.delayMs ? { delay: item.delayMs } : {}) },
    }));
    const queue = this.queue(job.queue);
    if (jobs.length === 1) await queue.add(jobs[0]!.name, jobs[0]!.data, jobs[0]!.opts);
    else if (jobs.length > 1) await queue.addBulk(jobs);
  }

  /**
   * Closes the queues. They share the service's connection, so closing one sends nothing; while Redis is away
   * (decision 0470), or hangs (decision 0478), they are not first waited for, since they would not finish connecting.
   */
  async onModuleDestroy(): Promise<void> {
    const away = await probeUnreachable(this.redis);
    await Promise.all([...this.queues.values()].map((q) => (away ? q.close() : closeWhenConnected(q))));
  }
}

type Handler = (payload: unknown, job: Job) => Promise<unknown>;

/**
 * Consumer side: finds every @ProcessJob method, checks that each job of each consumed queue has exactly
 * one, and runs a BullMQ worker per queue. A payload that fails its schema fails the job at once
 * (UnrecoverableError): it stays in the failed set as a dead letter and is never retried.
 * On shutdown, workers finish their active jobs before the process exits.
 */
@Injectable()
export class JobWorkers implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger(JobWorkers.name);
  private readonly workers: Worker[] = [];
  /** The processors running now: a shutdown while Redis is away waits for them itself (onModuleDestroy). */
  private readonly running = new Set<Promise<unknown>>();

  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly reflector: Reflector,
    @Inject(REDIS) private readonly redis: Redis,
    @Inject(PLATFORM_OPTIONS) private readonly options: PlatformOptions,
  ) {}

  private findHandlers(): Map<string, Handler[]> {
    const handlers = new Map<string, Handler[]>();
    for (const wrapper of this.discovery.getProviders()) {
      const instance = wrapper.instance as Record<string, unknown> | undefined;
      if (!instance || typeof instance !== 'object' || !wrapper.isDependencyTreeStatic()) continue;
      const prototype = Object.getPrototypeOf(instance);
      for (const method of this.scanner.getAllMethodNames(prototype)) {
        const jobName = this.reflector.get<string | undefined>(PROCESS_JOB, prototype[method]);
        if (!jobName) continue;
        const list = handlers.get(jobName) ?? [];
        list.push((payload, job) => (instance[method] as Handler).call(instance, payload, job));
        handlers.set(jobName, list);
      }
    }
    return handlers;
  }

  onApplicationBootstrap(): void {
    const consumes = this.options.consumes ?? [];
    const handlers = this.findHandlers();
    assertJobCoverage(
      consumes,
      [...handlers.entries()].flatMap(([name, list]) => list.map(() => name)),
    );
    for (const queue of consumes) {
      const worker = createWorker(queue, (job) => this.process(job, handlers), {
        connection: this.redis,
        prefix: bullPrefix(this.options.env.QUEUE_PREFIX),
        concurrency: this.options.workerConcurrency ?? 20,
        settings: WORKER_SETTINGS,
        ...(this.options.maxStalledCount !== undefined
          ? { maxStalledCount: this.options.maxStalledCount }
          : {}),
        ...(this.options.lockDurationMs !== undefined ? { lockDuration: this.options.lockDurationMs } : {}),
        ...(this.options.stalledIntervalMs !== undefined
          ? { stalledInterval: this.options.stalledIntervalMs }
          : {}),
        autorun: true,
      });
      worker.on('failed', (job, err) => {
        if (err instanceof UnrecoverableError) {
          this.logger.error({ jobId: job?.id, job: job?.name, queue, err: err.message }, 'job dead-lettered');
        } else {
          this.logger.warn(
            { jobId: job?.id, job: job?.name, queue, attempt: job?.attemptsMade, err: err.message },
            'job failed',
          );
        }
      });
      // A Redis outage reaches every worker as a stream of connection errors: logged throttled, at warn, as the
      // service's own connections log theirs (decisions 0468, 0470); any other error is one error line.
      const outage = connectionErrorLog(`bullmq:${queue}`);
      worker.on('error', (err) => {
        if (isConnectionError(err)) outage.error(err);
        else this.logger.error({ queue, err: err.message }, 'worker error');
      });
      worker.on('ready', outage.ready);
      this.workers.push(worker);
    }
  }

  private async process(job: Job, handlers: Map<string, Handler[]>): Promise<unknown> {
    const definition = jobDefinition(job.name);
    const handler = handlers.get(job.name)?.[0];
    if (!definition || !handler) throw new UnrecoverableError(`No processor for job ${job.name}`);
    let payload: unknown;
    try {
      payload = parseJobPayload(definition, job.data);
    } catch (err) {
      if (err instanceof JobPayloadError) throw new UnrecoverableError(err.message);
      throw err;
    }
    const run = handler(payload, job);
    this.running.add(run);
    run.finally(() => this.running.delete(run)).catch(() => undefined);
    return run;
  }

  /**
   * Stops taking jobs and waits for the active ones: the drain of a graceful shutdown. A worker created a moment
   * ago is first let finish connecting (closeWhenConnected).
   *
   * While Redis is away (decision 0470), BullMQ's own drain never ends: it waits for its blocking connection to
   * end, and ioredis never ends a connection disconnected while it waits to reconnect (redis/ioredis#2169); its
   * QUIT would wait for Redis to come back. The workers then wait for the processors running here to finish, and
   * are closed with `force`, which disconnects without waiting. A job whose completion could not be recorded is
   * still active in Redis: once its lock expires, it runs again on another worker (the consumers are idempotent).
   * A Redis that holds the connection without answering counts as away (probeUnreachable, decision 0478).
   */
  async onModuleDestroy(): Promise<void> {
    if (await probeUnreachable(this.redis)) {
      await Promise.allSettled([...this.running]);
      await Promise.all(this.workers.map((w) => w.close(true)));
      return;
    }
    await Promise.all(this.workers.map((w) => closeWhenConnected(w)));
  }
}
