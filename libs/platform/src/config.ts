import { z } from 'zod';

/** Thrown at boot when the environment does not match the service's schema. */
export class ConfigError extends Error {
  constructor(readonly issues: string[]) {
    super(`Invalid environment configuration:\n  - ${issues.join('\n  - ')}`);
    this.name = 'ConfigError';
  }
}

const boolean = z.enum(['true', 'false', '1', '0']).transform((v) => v === 'true' || v === '1');

const base64Key32 = z
  .string()
  .refine((v) => Buffer.from(v, 'base64').length === 32, 'must be base64 of exactly 32 bytes');

/** HTTP_REQUEST_TIMEOUT_MS with a service's own default: one second to one hour. */
export const requestTimeoutMs = (defaultMs: number) =>
  z.coerce.number().int().min(1000).max(3_600_000).default(defaultMs);

/** Variables every Tessera service reads (DECISIONS.md, "Operating interface"). */
export const baseEnvSchema = z.object({
  NODE_ENV: z.enum(['development', 'test', 'production']).default('development'),
  DATABASE_URL: z.string().regex(/^postgres(ql)?:\/\//, 'must be a postgres:// URL'),
  REDIS_URL: z.string().regex(/^rediss?:\/\//, 'must be a redis:// URL'),
  PORT: z.coerce.number().int().min(0).max(65535),
  HOST: z.string().default('0.0.0.0'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  LOG_REQUESTS: boolean.default(true),
  ADMIN_TOKEN: z.string().min(16, 'must be at least 16 characters').optional(),
  /** Bearer token Prometheus sends to /metrics; unset, /metrics is closed in production (docs/reliability.md). */
  METRICS_TOKEN: z.string().min(16, 'must be at least 16 characters').optional(),
  SECRETS_MASTER_KEY: base64Key32.optional(),
  MIGRATE_ON_BOOT: boolean.default(false),
  QUEUE_PREFIX: z
    .string()
    .regex(/^[A-Za-z0-9_.:-]+$/, 'letters, digits and _.:- only')
    .default('tessera'),
  DB_POOL_SIZE: z.coerce.number().int().min(1).max(200).default(20),
  /**
   * How long a command on the request path's Redis connection (rate limits, permits, replay cache) may wait for
   * its reply; past it the request answers 503 with Retry-After: 1 (decision 0484). Never applied to BullMQ's
   * connections, whose workers block.
   */
  REDIS_COMMAND_TIMEOUT_MS: z.coerce.number().int().min(100).max(60000).default(2000),
  SHUTDOWN_TIMEOUT_MS: z.coerce.number().int().min(0).default(10000),
  /**
   * The longest a client may take to send one whole request, headers and body (decision 0499); past it the
   * request answers 408 in the error shape and its connection closes. The headers alone get at most 60 s (or
   * this, when lower). Node's own default, which Fastify turns off: a client dripping a body byte by byte held
   * its connection for ever. Services that take uploads raise the default.
   */
  HTTP_REQUEST_TIMEOUT_MS: requestTimeoutMs(300_000),
  /** Producing services only: false leaves the outbox relay idle (another process relays). */
  OUTBOX_RELAY_ENABLED: boolean.default(true),
  /**
   * Producing services only: a busy outbox relay starts a pass at most once per this many ms (the commits that
   * wake it meanwhile share the next pass); an idle relay's first wake runs at once. 0: a pass per wake.
   */
  OUTBOX_RELAY_MIN_INTERVAL_MS: z.coerce.number().int().min(0).max(1000).default(20),
  /** Producing services only: relayed outbox rows older than this are deleted by the relay; 0 keeps them. */
  OUTBOX_RETENTION_HOURS: z.coerce.number().int().min(0).max(87600).default(168),
});

export type BaseEnv = z.infer<typeof baseEnvSchema>;

/** Parses the environment once; a bad value crashes the boot with every problem listed. */
export function loadConfig<S extends z.ZodType>(
  schema: S,
  env: Record<string, string | undefined>,
): z.infer<S> {
  const cleaned = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const result = schema.safeParse(cleaned);
  if (!result.success) {
    throw new ConfigError(
      result.error.issues.map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`),
    );
  }
  return result.data;
}

/**
 * A comma-separated list (blanks dropped). With `problem`, each entry is checked, and a bad one stops the boot
 * with it named (say, `cidrProblem` for TRUSTED_PROXIES).
 */
export const envList = (problem?: (entry: string) => string | undefined) =>
  z
    .string()
    .transform((v) =>
      v
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean),
    )
    .superRefine((list, ctx) => {
      for (const entry of problem ? list : []) {
        const message = problem!(entry);
        if (message) ctx.addIssue({ code: 'custom', message });
      }
    });

export { boolean as envBoolean, base64Key32 as envBase64Key32 };
