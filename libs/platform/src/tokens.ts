import type { QueueName } from '@tessera/contracts';
import type { MixedList, EntitySchema } from 'typeorm';
import type { BaseEnv } from './config';

/** An entity or migration class, as TypeORM types it. */
// eslint-disable-next-line @typescript-eslint/no-unsafe-function-type
export type ClassRef = Function;

export const PLATFORM_OPTIONS = Symbol('PLATFORM_OPTIONS');
export const REDIS = Symbol('REDIS');
/**
 * A second Redis connection with auto-pipelining, for short commands on the request path (rate limits,
 * replay cache): the commands of concurrent requests leave in one write. Never for BullMQ, blocking or
 * pub/sub commands, which stay on REDIS.
 */
export const REQUEST_REDIS = Symbol('REQUEST_REDIS');
export const ROOT_LOGGER = Symbol('ROOT_LOGGER');
export const APP_CONFIG = Symbol('APP_CONFIG');

export interface PlatformOptions {
  /** Service name: the log `service` field and the metrics label. */
  service: string;
  env: BaseEnv;
  /** Which contract's error shape this HTTP app speaks. */
  errorShape: 'verification' | 'custody';
  database: {
    schema: string;
    entities: MixedList<ClassRef | string | EntitySchema>;
    migrations: MixedList<ClassRef | string>;
    /** Settings of every pooled session (ServiceDatabaseOptions.settings). */
    settings?: Readonly<Record<string, string>>;
  };
  /** Queues this process works. Each of their jobs must have exactly one @ProcessJob. */
  consumes?: QueueName[];
  workerConcurrency?: number;
  /**
   * How many times a job may be found stalled (its worker died holding it) and be run again before BullMQ fails
   * it for good; default 1 (BullMQ's). A consumer whose jobs are idempotent and carry many items raises it, so a
   * few crashes in a row never drop a job (webhook-dispatcher, decision 0402).
   */
  maxStalledCount?: number;
  /**
   * How long a job's lock lasts without renewal (BullMQ renews it at half this while the job runs), and how
   * often workers look for jobs whose worker died holding them; BullMQ's defaults are 30 s and 30 s. A job of a
   * killed worker is found stalled on the second look after its lock has expired, so with the defaults it
   * waits up to about a minute, with 15 s and 5 s about 25 s (custody worker, docs/reliability.md).
   */
  lockDurationMs?: number;
  stalledIntervalMs?: number;
  /**
   * Paths whose captured segment is a capability (the hosted page's link short code: whoever holds it gets
   * the end user's session). Access lines log the segment as [REDACTED], in the URL and in a Referer.
   */
  secretPath?: RegExp;
  /** Where log lines go (default stdout); tests pass a LogCapture. */
  logDestination?: NodeJS.WritableStream;
  /**
   * Fastify plugins this app needs (e.g. multipart), registered on the root instance before the app initialises,
   * so that Nest's error handling and every hook still apply to their routes.
   */
  httpPlugins?: HttpPlugin[];
}

/** A Fastify plugin with its options, as `app.register` takes them. */
export interface HttpPlugin {
  plugin: any;
  options?: Record<string, unknown>;
}
