import { createHash } from 'node:crypto';
import {
  type DynamicModule,
  Inject,
  Injectable,
  Logger,
  Module,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import {
  type JobKey,
  type JobPayload,
  WEBHOOK_EVENTS_PER_JOB,
  type WebhookEventPayload,
} from '@tessera/contracts';
import type Redis from 'ioredis';
import type { QueryResult } from 'pg';
import { DataSource } from 'typeorm';
import { ChannelListener } from './channel-listener';
import { JobQueues } from './jobs';
import { outboxChannel, registerLocalOutboxRelay } from './outbox-wake';
import { PacedTask } from './paced-task';
import { pgPool } from './prepared';
import { RetentionPass } from './retention-pass';
import { isUnreachable, probeUnreachable } from './redis';
import { PLATFORM_OPTIONS, REDIS, type PlatformOptions } from './tokens';

export interface OutboxRelayOptions {
  /** The `source` of every relayed event (which partner API the events belong to). */
  source: 'custody' | 'verification';
  /** False: the provider is registered but idle (env flag OUTBOX_RELAY_ENABLED=false). Default true. */
  enabled?: boolean;
  /** Backstop poll when no NOTIFY arrives (default 1000 ms; the contract's "about every 5 s" is a ceiling). */
  pollMs?: number;
  batchSize?: number;
  /** Overrides OUTBOX_RELAY_MIN_INTERVAL_MS (the least time from one pass's start to the next while busy). */
  minIntervalMs?: number;
  /** How often the retention pass runs (default 60 s); OUTBOX_RETENTION_HOURS says what it deletes. */
  pruneEveryMs?: number;
  /**
   * Jobs of the producing service that an event starts, enqueued in the same relay step as its webhook job
   * (custody: `transaction.created` starts the transaction's machine). Enqueued only after the event's
   * commit, and again after a crash before the row is taken off the queue, so give them deterministic job ids.
   */
  followUps?: (event: RelayedEvent) => FollowUpJob[];
}

/** An outbox row as the relay hands it on. */
export interface RelayedEvent {
  id: string;
  tenantId: string;
  eventType: string;
  entityType: string;
  entityId: string;
  /** Gap-free per (tenant, entityType, entityId), from the outbox row (decision 0225). */
  sequence: number;
  data: Record<string, unknown>;
}

export interface FollowUpJob<K extends JobKey = JobKey> {
  job: K;
  jobId: string;
  payload: JobPayload<K>;
  delayMs?: number;
}

export const OUTBOX_RELAY_OPTIONS = Symbol('OUTBOX_RELAY_OPTIONS');

/** A pass's enqueue given up by a shutdown while Redis is away: its rows stay queued (decision 0470). */
class EnqueueAbandoned extends Error {
  constructor() {
    super('Redis is unreachable at shutdown; the batch stays queued for the next relay');
  }
}

/**
 * Relayed events as `webhook.events.v1` jobs of at most WEBHOOK_EVENTS_PER_JOB events each, in order
 * (decision 0402). The job id names the chunk's first event, its size and a digest of every event id in it, so
 * a replay of the same rows after a crash between enqueue and commit is deduplicated by BullMQ, while a chunk
 * that merely starts with the same event and has the same size (SKIP LOCKED and out-of-order commits can cut
 * the replay differently) is a new job: BullMQ drops a job whose id it already holds, and with it every event
 * the first job lacked. Events in both jobs are harmless, since the dispatcher's inbox and its unique
 * (event, endpoint) key ignore an event they already hold.
 */
export function webhookEventJobs(
  events: WebhookEventPayload[],
): { jobId: string; payload: JobPayload<'WEBHOOK_EVENTS'> }[] {
  const jobs = [];
  for (let i = 0; i < events.length; i += WEBHOOK_EVENTS_PER_JOB) {
    const chunk = events.slice(i, i + WEBHOOK_EVENTS_PER_JOB);
    const digest = createHash('sha256')
      .update(chunk.map((e) => e.eventId).join(','))
      .digest('base64url')
      .slice(0, 22);
    jobs.push({ jobId: `events-${chunk[0]!.eventId}-${chunk.length}-${digest}`, payload: { events: chunk } });
  }
  return jobs;
}

interface OutboxRow {
  id: string;
  tenant_id: string;
  event_type: string;
  entity_type: string;
  entity_id: string;
  /** bigint: pg hands it over as a string. */
  sequence: string;
  data: Record<string, unknown>;
  occurred_at: Date;
  created_at: Date;
}

/**
 * Moves committed outbox rows to the webhook.events queue (ARCHITECTURE.md, "Transactional outbox").
 * Rows are claimed with FOR UPDATE SKIP LOCKED, so several relays share the work; each batch is enqueued
 * as `webhook.events.v1` jobs of up to 100 events (webhookEventJobs: a replay after a crash between enqueue
 * and commit is deduplicated by BullMQ, and by the dispatcher's inbox and unique key after that) and taken
 * off the pending queue in the same transaction (decision 0427). Producers wake it after they commit
 * (outbox-wake.ts): directly when it runs in their process on the same DataSource, else by a NOTIFY on the
 * schema's channel, on which it LISTENs; a poll is the backstop for lost wakes and for a dropped LISTEN
 * connection.
 */
@Injectable()
export class OutboxRelay implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(OutboxRelay.name);
  /** Made at bootstrap (a relay constructed and never started, as in tests, reads no settings for it). */
  private listener: ChannelListener | null = null;
  private timer: NodeJS.Timeout | null = null;
  /** One pass at a time, at most one started per minIntervalMs; the backstop poll is armed after each. */
  private readonly passes = new PacedTask(
    async () => {
      if (this.timer) clearTimeout(this.timer);
      await this.drain();
    },
    () => {
      this.timer = setTimeout(() => this.wake(), this.options.pollMs ?? 1000);
    },
  );
  private stopped = false;
  /** Aborted by a shutdown while Redis is away: the pass in flight stops waiting for its enqueue. */
  private readonly abandon = new AbortController();
  private unregisterLocal: (() => void) | null = null;
  private readonly retention: RetentionPass;

  constructor(
    private readonly dataSource: DataSource,
    private readonly queues: JobQueues,
    @Inject(REDIS) private readonly redis: Redis,
    @Inject(PLATFORM_OPTIONS) private readonly platform: PlatformOptions,
    @Inject(OUTBOX_RELAY_OPTIONS) private readonly options: OutboxRelayOptions,
  ) {
    this.retention = new RetentionPass({
      deleteBatch: (limit) => this.deleteExpired(limit),
      batch: PRUNE_BATCH,
      everyMs: options.pruneEveryMs ?? 60_000,
      onDeleted: (deleted) =>
        this.logger.log(
          { deleted, retentionHours: platform.env.OUTBOX_RETENTION_HOURS },
          'outbox: relayed rows past retention deleted',
        ),
      onError: (err) => this.logger.warn({ err: err.message }, 'outbox retention pass failed'),
    });
  }

  async onApplicationBootstrap(): Promise<void> {
    if (this.options.enabled === false) {
      this.logger.warn('outbox relay disabled (OUTBOX_RELAY_ENABLED=false)');
      return;
    }
    this.unregisterLocal = registerLocalOutboxRelay(this.dataSource, () => this.wake());
    this.listener = new ChannelListener({
      databaseUrl: this.platform.env.DATABASE_URL,
      channel: outboxChannel(this.platform.database.schema),
      applicationName: `${this.platform.service}-outbox-listen`,
      onNotify: () => this.wake(),
    });
    await this.listener.start();
    this.wake();
    if (this.platform.env.OUTBOX_RETENTION_HOURS !== 0) this.retention.start();
  }

  /**
   * The least time from one pass's start to the next (decision 0418): a producer that commits every few
   * milliseconds wakes the relay once per commit, and a pass per wake cost more than the commits' own relaying
   * (a transaction, a BullMQ enqueue, a commit). Within the interval, wakes share one pass at its end; the first
   * wake after a quiet interval runs at once, and a backlog (full batches) drains without pause in `drain`.
   */
  private minIntervalMs(): number {
    return this.options.minIntervalMs ?? this.platform.env.OUTBOX_RELAY_MIN_INTERVAL_MS;
  }

  /** Runs the relay now, or right after the current pass, or at the end of the interval (minIntervalMs). */
  wake(): void {
    if (!this.stopped) this.passes.request(this.minIntervalMs());
  }

  /**
   * Relays batches until one is not full. While Redis is away no pass starts (decision 0470): its enqueue would
   * hold a transaction and its claimed rows until Redis is back; the backstop poll tries again.
   */
  private async drain(): Promise<void> {
    const batch = this.options.batchSize ?? 500;
    try {
      while (!this.stopped && !isUnreachable(this.redis) && (await this.relayBatch(batch)) === batch);
    } catch (err) {
      if (err instanceof EnqueueAbandoned)
        this.logger.warn({ err: err.message }, 'outbox relay pass abandoned');
      else this.logger.error({ err: (err as Error).message }, 'outbox relay failed; will retry');
    }
  }

  /** The pass's enqueue, unless a shutdown while Redis is away gives it up (the caller rolls back). */
  private enqueueUnlessAbandoned(rows: OutboxRow[]): Promise<void> {
    const { signal } = this.abandon;
    if (signal.aborted) return Promise.reject(new EnqueueAbandoned());
    return new Promise((resolve, reject) => {
      const onAbort = () => reject(new EnqueueAbandoned());
      signal.addEventListener('abort', onAbort, { once: true });
      this.enqueue(rows)
        .then(resolve, reject)
        .finally(() => signal.removeEventListener('abort', onAbort));
    });
  }

  /**
   * One batch in one transaction; returns how many rows were relayed. Two round trips: the claim, which also
   * takes the rows off the pending queue (uncommitted), and the COMMIT after the enqueue. A failed enqueue puts
   * them back (the rollback); a crash between the enqueue and the commit leaves the rows queued, so they are
   * enqueued again (deduplicated by BullMQ's job id and the dispatcher's inbox).
   */
  async relayBatch(limit: number): Promise<number> {
    const client = await pgPool(this.dataSource).connect();
    try {
      const results = (await client.query(claimBatch(limit))) as unknown as QueryResult<OutboxRow>[];
      const rows = results.at(-1)!.rows;
      if (rows.length > 0) await this.enqueueUnlessAbandoned(rows.sort(byCreatedAt));
      await client.query('COMMIT');
      return rows.length;
    } catch (err) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw err;
    } finally {
      client.release();
    }
  }

  private async enqueue(rows: OutboxRow[]): Promise<void> {
    await this.queues.addBulk(
      'WEBHOOK_EVENTS',
      webhookEventJobs(
        rows.map((r) => ({
          eventId: r.id,
          source: this.options.source,
          tenantId: r.tenant_id,
          eventType: r.event_type,
          entityType: r.entity_type,
          entityId: r.entity_id,
          sequence: Number(r.sequence),
          occurredAt: new Date(r.occurred_at).toISOString(),
          data: r.data,
        })),
      ),
    );
    await this.enqueueFollowUps(rows);
  }

  private async enqueueFollowUps(rows: OutboxRow[]): Promise<void> {
    const { followUps } = this.options;
    if (!followUps) return;
    const byJob = new Map<JobKey, FollowUpJob[]>();
    for (const r of rows) {
      const event: RelayedEvent = {
        id: r.id,
        tenantId: r.tenant_id,
        eventType: r.event_type,
        entityType: r.entity_type,
        entityId: r.entity_id,
        sequence: Number(r.sequence),
        data: r.data,
      };
      for (const f of followUps(event)) {
        const list = byJob.get(f.job);
        if (list) list.push(f);
        else byJob.set(f.job, [f]);
      }
    }
    for (const [job, items] of byJob) await this.queues.addBulk(job, items as FollowUpJob<typeof job>[]);
  }

  /**
   * Deletes outbox rows older than OUTBOX_RETENTION_HOURS (0: none) that are no longer queued, 5,000 per
   * statement through `outbox_created_idx`, until none is left; replicas skip each other's rows. Returns how many
   * went. Nothing reads a relayed row again: the dispatcher keeps its own copy of every event.
   */
  async prune(): Promise<number> {
    return this.platform.env.OUTBOX_RETENTION_HOURS === 0 ? 0 : this.retention.run();
  }

  private async deleteExpired(limit: number): Promise<number> {
    const [{ n }] = await this.dataSource.query<{ n: number }[]>(
      `WITH old AS (
         SELECT id FROM outbox o WHERE created_at < now() - make_interval(hours => $1)
            AND NOT EXISTS (SELECT 1 FROM outbox_pending p WHERE p.id = o.id)
         ORDER BY created_at LIMIT $2 FOR UPDATE SKIP LOCKED),
       gone AS (DELETE FROM outbox o USING old WHERE o.id = old.id RETURNING 1)
       SELECT count(*)::int AS n FROM gone`,
      [this.platform.env.OUTBOX_RETENTION_HOURS, limit],
    );
    return n;
  }

  /**
   * Lets the pass in flight finish, then stops. While Redis is away (decision 0470) the pass's enqueue would wait
   * for Redis to come back: it is given up, and the pass rolls back, so its rows stay queued for the next relay
   * (an enqueue that still reaches Redis later is deduplicated, as after a crash between enqueue and commit).
   */
  async onApplicationShutdown(): Promise<void> {
    this.stopped = true;
    if (await probeUnreachable(this.redis)) this.abandon.abort();
    this.unregisterLocal?.();
    if (this.timer) clearTimeout(this.timer);
    await Promise.all([this.passes.stop(), this.retention.stop()]);
    await this.listener?.stop();
  }
}

const PRUNE_BATCH = 5000;

/**
 * How a relay pass plans its claim (decisions 0406, 0427): as an index scan of `outbox_pending_created_idx` in
 * `created_at` order. Left to itself the planner may pick a bitmap scan plus a sort, since it expects few queued
 * rows; but until vacuum runs, the index still holds an entry for every row taken off the queue since, and a
 * bitmap scan fetches every one of those dead rows on every pass. A plain index scan marks the entries of dead
 * rows as it meets them (kill_prior_tuple), so the next pass skips them.
 */
export const CLAIM_PLAN = 'SET LOCAL enable_bitmapscan = off; SET LOCAL enable_seqscan = off';

/**
 * Claims up to `limit` queued rows, oldest first, skipping rows another relay holds, and takes them off the
 * queue (decision 0427): a delete of narrow queue rows found by their ctid, then the outbox rows by primary key.
 * The outbox row itself is not written.
 */
export function claimStatement(limit: number): string {
  if (!Number.isInteger(limit) || limit < 1) throw new Error(`outbox relay: bad batch size ${limit}`);
  return `WITH claimed AS (
      DELETE FROM outbox_pending WHERE ctid = ANY (ARRAY(
        SELECT ctid FROM outbox_pending ORDER BY created_at LIMIT ${limit} FOR UPDATE SKIP LOCKED))
      RETURNING id)
    SELECT o.id, o.tenant_id, o.event_type, o.entity_type, o.entity_id, o.sequence, o.data, o.occurred_at,
           o.created_at
      FROM outbox o WHERE o.id IN (SELECT id FROM claimed)`;
}

/** A relay pass's first round trip, one simple-protocol query (the limit is ours, an integer). */
const claimBatch = (limit: number) => `BEGIN; ${CLAIM_PLAN}; ${claimStatement(limit)}`;

const byCreatedAt = (a: OutboxRow, b: OutboxRow) => a.created_at.getTime() - b.created_at.getTime();

/** Registers the outbox relay in a producing service (custody worker, verification API). */
@Module({})
export class OutboxRelayModule {
  static forRoot(options: OutboxRelayOptions): DynamicModule {
    return {
      module: OutboxRelayModule,
      providers: [{ provide: OUTBOX_RELAY_OPTIONS, useValue: options }, OutboxRelay],
      exports: [OutboxRelay],
    };
  }
}
