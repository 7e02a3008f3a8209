import { baseEnvSchema, loadConfig } from '@tessera/platform';
import { z } from 'zod';

const csv = z.string().transform((v) =>
  v
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean),
);

export const envSchema = baseEnvSchema.extend({
  PORT: z.coerce.number().int().min(0).max(65535).default(3002),
  WORKER_PORT: z.coerce.number().int().min(0).max(65535).default(3012),
  /** Signed requests allowed per API key per minute (contract: 120; the bench raises it). */
  CUSTODY_RATE_LIMIT_PER_KEY: z.coerce.number().int().min(1).default(120),
  /** Anonymous requests (/health, /swagger) allowed per client IP per minute. */
  CUSTODY_RATE_LIMIT_PER_IP: z.coerce.number().int().min(1).default(60),
  /**
   * Failed authentications allowed per client IP per minute before 429, counted separately for the signed
   * API and for the operator API.
   */
  CUSTODY_AUTH_FAILURES_PER_IP: z.coerce.number().int().min(1).default(20),
  /** CIDRs of reverse proxies whose X-Forwarded-For is trusted (comma-separated). */
  TRUSTED_PROXIES: csv.default([]),
  /** Simulator chain: delay between two status steps, and per confirmation while Confirming. */
  CHAIN_SIM_STEP_DELAY_MS: z.coerce.number().int().min(0).default(1000),
  CHAIN_SIM_BLOCK_MS: z.coerce.number().int().min(0).default(200),
  /** Simulator chain: withdrawals to these destination addresses fail at broadcast. */
  CHAIN_SIM_FAIL_DESTINATIONS: csv.default([]),
  /** Worker: an in-flight transaction untouched for this long has its next step re-enqueued if lost. */
  CUSTODY_SWEEP_AFTER_MS: z.coerce.number().int().min(1).default(60_000),
  /** Worker: how often the stuck-transaction sweeper runs; 0 turns it off. */
  CUSTODY_SWEEP_INTERVAL_MS: z.coerce.number().int().min(0).default(30_000),
});

export type Env = z.infer<typeof envSchema>;

/** The only reader of process.env in this app. */
export const loadEnv = (env: Record<string, string | undefined> = process.env): Env =>
  loadConfig(envSchema, env);
