import { cidrProblem } from '@tessera/auth';
import { baseEnvSchema, envBase64Key32, envList, loadConfig } from '@tessera/platform';
import { z } from 'zod';

const csv = envList();

export const envSchema = baseEnvSchema.extend({
  /** Encrypts secrets and seeds at rest: required by this app (base64 of 32 bytes). */
  SECRETS_MASTER_KEY: envBase64Key32,
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
  /** CIDRs of reverse proxies whose X-Forwarded-For is trusted (comma-separated); a bad entry stops the boot. */
  TRUSTED_PROXIES: envList(cidrProblem).default([]),
  /**
   * State-machine jobs a worker runs at once (BullMQ concurrency). The steps that run together share
   * their reads and commits (decision 0423), so a deeper queue costs fewer statements per step; 400 since
   * a job runs on through the steps due at once (decision 0424).
   */
  CUSTODY_WORKER_CONCURRENCY: z.coerce.number().int().min(1).max(1000).default(400),
  /** Simulator chain: delay between two status steps, and per confirmation while Confirming. */
  CHAIN_SIM_STEP_DELAY_MS: z.coerce.number().int().min(0).default(1000),
  CHAIN_SIM_BLOCK_MS: z.coerce.number().int().min(0).default(200),
  /** Simulator chain: withdrawals to these destination addresses fail at broadcast. */
  CHAIN_SIM_FAIL_DESTINATIONS: csv.default([]),
  /** Worker: an in-flight transaction untouched for this long has its next step re-enqueued if lost. */
  CUSTODY_SWEEP_AFTER_MS: z.coerce.number().int().min(1).default(60_000),
  /** Worker: how often the stuck-transaction sweeper runs; 0 turns it off. */
  CUSTODY_SWEEP_INTERVAL_MS: z.coerce.number().int().min(0).default(30_000),
  /** Worker: how often withdrawals whose approval window closed are cancelled; 0 turns it off. */
  CUSTODY_APPROVAL_EXPIRY_INTERVAL_MS: z.coerce.number().int().min(0).default(10_000),
  /**
   * Worker: how often the scheduled reconciliation runs (decision 0226); 0 turns it off. Default 10 min.
   */
  CUSTODY_RECONCILE_INTERVAL_MS: z.coerce.number().int().min(0).default(600_000),
  /**
   * EVM chain (docs/decisions/0210): JSON-RPC URL of the node. Unset: every key stays on the simulator. Set:
   * live keys move ETH and USDT on this chain; sandbox keys, BTC and XRP stay on the simulator.
   */
  CHAIN_EVM_RPC_URL: z.string().url().optional(),
  /** Chain id the node must report (signatures are bound to it); 31337 is Hardhat. */
  CHAIN_EVM_CHAIN_ID: z.coerce.number().int().min(1).default(31337),
  /** Address of the USDT ERC-20 contract on that chain; unset: USDT deposits are not detected. */
  CHAIN_EVM_USDT_CONTRACT: z
    .string()
    .regex(/^0x[0-9a-fA-F]{40}$/, 'must be a 0x-prefixed 20-byte hex address')
    .optional(),
  /** Local override of the confirmations ETH and USDT need (the seeded assets keep 12). */
  CHAIN_EVM_CONFIRMATIONS: z.coerce.number().int().min(1).optional(),
  /** How often the worker's chain watcher polls the node. */
  CHAIN_EVM_POLL_MS: z.coerce.number().int().min(10).default(2000),
  /** First block the deposit scanner reads when it has no cursor yet. */
  CHAIN_EVM_START_BLOCK: z.coerce.number().int().min(0).default(0),
  /** Blocks fetched and committed together by one scan step. */
  CHAIN_EVM_SCAN_BATCH: z.coerce.number().int().min(1).max(1000).default(50),
  /** A broadcast withdrawal not mined after this long is re-broadcast with bumped fees. */
  CHAIN_EVM_STUCK_AFTER_MS: z.coerce.number().int().min(100).default(180_000),
});

export type Env = z.infer<typeof envSchema>;

/** The only reader of process.env in this app. */
export const loadEnv = (env: Record<string, string | undefined> = process.env): Env =>
  loadConfig(envSchema, env);
