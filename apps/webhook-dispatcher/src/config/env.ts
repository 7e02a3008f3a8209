import { baseEnvSchema, envBase64Key32, loadConfig } from '@tessera/platform';
import { WEBHOOK_EVENTS_PER_JOB } from '@tessera/contracts';
import { z } from 'zod';

const msList = z
  .string()
  .regex(/^\d+(,\d+)*$/, 'comma-separated milliseconds')
  .transform((v) => v.split(',').map(Number));

/**
 * How long before a claim's lease ends its request must be over: clock drift between the dispatcher and
 * Postgres, and the record's write (decision 0452).
 */
export const leaseMarginMs = (leaseMs: number): number => Math.min(1000, leaseMs / 10);

/** The shortest lease that holds a whole request of `timeoutMs` and its margin. */
const leastLeaseMs = (timeoutMs: number): number =>
  timeoutMs >= 9000 ? timeoutMs + 1000 : Math.ceil((timeoutMs * 10) / 9);

export const envSchema = baseEnvSchema
  .extend({
    /** Encrypts secrets and seeds at rest: required by this app (base64 of 32 bytes). */
    SECRETS_MASTER_KEY: envBase64Key32,
    PORT: z.coerce.number().int().min(0).max(65535).default(3003),
    /** Development and tests only: CIDRs exempt from the public-address rule. */
    WEBHOOK_ALLOW_PRIVATE_TARGETS: z.string().optional(),
    /** Development and tests only: a PEM CA trusted for receivers (a self-signed test certificate). */
    WEBHOOK_CA_FILE: z.string().optional(),
    /** Delays before attempts 2, 3, ...; the last one repeats when WEBHOOK_MAX_ATTEMPTS is raised. */
    WEBHOOK_RETRY_SCHEDULE_MS: msList.default([10_000, 30_000, 60_000, 300_000, 900_000]),
    WEBHOOK_MAX_ATTEMPTS: z.coerce.number().int().min(1).max(50).default(5),
    /** Multiplies every retry delay (tests compress time with e.g. 0.001). */
    WEBHOOK_TIME_SCALE: z.coerce.number().positive().default(1),
    WEBHOOK_JITTER: z.coerce.number().min(0).max(0.5).default(0.1),
    WEBHOOK_TIMEOUT_MS: z.coerce.number().int().min(1).default(5000),
    /** How often due retries (and deliveries abandoned by a crashed worker) are looked for. */
    WEBHOOK_POLL_MS: z.coerce.number().int().min(10).default(1000),
    /** A claimed delivery is taken over by another worker when its claim is this old. */
    WEBHOOK_LEASE_MS: z.coerce.number().int().min(100).default(30_000),
    /**
     * Requests to receivers in flight at once per process (and the poller's deliveries in flight); up to twice as many
     * deliveries may be claimed, so the next claims are committed while these requests run.
     */
    WEBHOOK_CONCURRENCY: z.coerce.number().int().min(1).max(1000).default(64),
    /**
     * The poller's deliveries (retries, re-queues, takeovers) to one endpoint in flight at once per process. Unset:
     * a quarter of WEBHOOK_CONCURRENCY (at least 1), so a slow receiver's backlog leaves the other slots to the
     * others (decision 0455).
     */
    WEBHOOK_ENDPOINT_CONCURRENCY: z.coerce.number().int().min(1).max(1000).optional(),
    /**
     * A first attempt (the arrival path) waits at most this long for one of its endpoint's request permits; then,
     * and for every new event of an endpoint with a waiter this old, the delivery is left due for the poller
     * instead of holding a claim (decision 0463).
     */
    WEBHOOK_ENDPOINT_WAIT_MS: z.coerce.number().int().min(10).default(1000),
    /**
     * webhook.events jobs taken at once per process (each holds up to 100 events; decision 0402). Unset:
     * min(WEBHOOK_CONCURRENCY, 16), and at least ceil(2 × WEBHOOK_CONCURRENCY / 100) + 1 — enough small jobs of a
     * steady stream in progress together, and enough events in hand to keep every delivery slot busy.
     */
    WEBHOOK_JOB_CONCURRENCY: z.coerce.number().int().min(1).max(1000).optional(),
    WEBHOOK_RESPONSE_BODY_LIMIT: z.coerce.number().int().min(0).default(2048),
    /**
     * Inbox rows (`received_events`) older than this many hours are deleted, once a minute (decision 0431); 0
     * keeps them. The inbox only has to outlive every redelivery of an event (a relay replay, a BullMQ retry),
     * which comes within minutes; deliveries and their attempts keep their own copy of the event.
     */
    WEBHOOK_INBOX_RETENTION_HOURS: z.coerce.number().int().min(0).max(87600).default(720),
    /**
     * Finished deliveries (delivered or dead) created more than this many days ago, and not attempted since, are
     * deleted with their attempts, once a minute (decision 0433); 0 keeps them. Pending and retrying deliveries are
     * never deleted. This is how far back `GET …/webhooks/deliveries` can look.
     */
    WEBHOOK_DELIVERY_RETENTION_DAYS: z.coerce.number().int().min(0).max(3650).default(90),
  })
  .superRefine((env, ctx) => {
    // A request never outlives its claim's lease (decision 0452): a lease that cannot hold a whole request
    // would cut every request short of WEBHOOK_TIMEOUT_MS, or give claims back unsent.
    const least = leastLeaseMs(env.WEBHOOK_TIMEOUT_MS);
    if (env.WEBHOOK_LEASE_MS < least)
      ctx.addIssue({
        code: 'custom',
        path: ['WEBHOOK_LEASE_MS'],
        message:
          `must be at least ${least} with WEBHOOK_TIMEOUT_MS=${env.WEBHOOK_TIMEOUT_MS} (the timeout plus a margin of ` +
          `min(1000, WEBHOOK_LEASE_MS / 10) ms): no request may outlive its claim's lease (decision 0452); ` +
          `raise WEBHOOK_LEASE_MS or lower WEBHOOK_TIMEOUT_MS`,
      });
  });

export type Env = z.infer<typeof envSchema>;

/** webhook.events jobs a process works at once (WEBHOOK_JOB_CONCURRENCY, or its default). */
export const jobConcurrency = (env: Env): number =>
  env.WEBHOOK_JOB_CONCURRENCY ??
  Math.max(
    Math.min(env.WEBHOOK_CONCURRENCY, 16),
    Math.ceil((2 * env.WEBHOOK_CONCURRENCY) / WEBHOOK_EVENTS_PER_JOB) + 1,
  );

/** The poller's deliveries to one endpoint in flight at once (WEBHOOK_ENDPOINT_CONCURRENCY, or its default). */
export const endpointConcurrency = (env: Env): number =>
  env.WEBHOOK_ENDPOINT_CONCURRENCY ?? Math.max(1, Math.ceil(env.WEBHOOK_CONCURRENCY / 4));

/**
 * One endpoint's requests in flight at once per process, first attempts and the poller's together: whatever
 * leaves WEBHOOK_ENDPOINT_CONCURRENCY permits to the other endpoints, and never less than that (decision 0463).
 * The permits past it go only to endpoints holding fewer than WEBHOOK_CONCURRENCY minus it (decision 0472).
 */
export const endpointRequestLimit = (env: Env): number =>
  Math.max(endpointConcurrency(env), env.WEBHOOK_CONCURRENCY - endpointConcurrency(env));

/** The only reader of process.env in this app. */
export const loadEnv = (env: Record<string, string | undefined> = process.env): Env =>
  loadConfig(envSchema, env);
