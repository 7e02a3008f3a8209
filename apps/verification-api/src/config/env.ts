import { cidrProblem } from '@tessera/auth';
import { baseEnvSchema, envBase64Key32, envList, loadConfig, requestTimeoutMs } from '@tessera/platform';
import { z } from 'zod';

/** A comma-separated list of IP addresses or CIDRs; a bad entry stops the boot with it named. */
const cidrList = envList(cidrProblem);

export const envSchema = baseEnvSchema.extend({
  /** Encrypts secrets and seeds at rest: required by this app (base64 of 32 bytes). */
  SECRETS_MASTER_KEY: envBase64Key32,
  PORT: z.coerce.number().int().min(0).max(65535).default(3001),
  /** 15 minutes to send a request (decision 0499): a 100 MB video upload at under 1 Mbit/s fits. */
  HTTP_REQUEST_TIMEOUT_MS: requestTimeoutMs(900_000),
  PUBLIC_BASE_URL: z.string().url().default('http://localhost:3001'),
  /** Partner requests per minute per credential (DECISIONS: 600). */
  RATE_LIMIT_PER_CREDENTIAL_PER_MINUTE: z.coerce.number().int().min(1).default(600),
  /** Failed authentications (partner or operator) per minute per client IP (contract: 20). */
  AUTH_RATE_LIMIT_PER_MINUTE: z.coerce.number().int().min(1).default(20),
  /**
   * How long a replica keeps a credential or level row in memory (0 disables). A deactivation or level edit
   * reaches every replica at once over Redis pub/sub (decision 0104); this TTL is the backstop for a lost
   * message.
   */
  /** Hosted SDK API calls per minute per session token (DECISIONS: 120). */
  SDK_RATE_LIMIT_PER_TOKEN_PER_MINUTE: z.coerce.number().int().min(1).default(120),
  /** Hosted SDK API calls and page loads per minute per client IP. */
  SDK_RATE_LIMIT_PER_IP_PER_MINUTE: z.coerce.number().int().min(1).default(600),
  /**
   * Addresses or CIDRs of the reverse proxies (the Ingress) in front of the app, comma-separated. Only when the
   * socket peer is one of them is the client IP (per-IP limits, logs) taken from X-Forwarded-For: its
   * right-most hop that is not itself a trusted proxy. Empty: the peer is the client, the header is ignored.
   */
  TRUSTED_PROXIES: cidrList.default([]),
  /** spawn-kyc calls per credential in a sliding hour (contract: 1000). */
  VERIFICATION_SPAWN_PER_HOUR: z.coerce.number().int().min(1).default(1000),
  /** regenerate-link calls per UBO row in a sliding 24 hours (contract: 5). */
  VERIFICATION_REGENERATE_PER_DAY: z.coerce.number().int().min(1).default(5),
  /** Port of the worker role's /health and /metrics (node dist/worker.js). */
  WORKER_PORT: z.coerce.number().int().min(0).max(65535).default(3011),
  /** Step checks a worker runs at once. */
  CHECKS_CONCURRENCY: z.coerce.number().int().min(1).max(100).default(4),
  /** Backstop poll of the worker's submitted-step sweep (a NOTIFY wakes it at once). */
  CHECKS_POLL_MS: z.coerce.number().int().min(50).max(60000).default(2000),
  /** How often the worker expires enrollments whose link has expired. */
  ENROLLMENT_EXPIRY_SWEEP_MS: z.coerce.number().int().min(100).max(3600000).default(60000),
  /** Media checks (decision 0133): the smallest document or selfie image, long side x short side in pixels. */
  CHECKS_IMAGE_MIN_LONG_SIDE: z.coerce.number().int().min(1).default(300),
  CHECKS_IMAGE_MIN_SHORT_SIDE: z.coerce.number().int().min(1).default(200),
  /** Bounds of a liveness clip's duration, read from its container by ffprobe. */
  CHECKS_LIVENESS_MIN_SECONDS: z.coerce.number().min(0).default(1),
  CHECKS_LIVENESS_MAX_SECONDS: z.coerce.number().min(0).default(30),
  /** The ffprobe binary (Debian's ffmpeg package). */
  FFPROBE_PATH: z.string().min(1).default('ffprobe'),
  /** The sanctions list file the AML screening reads; the bundled OFAC SDN snapshot when unset. */
  SANCTIONS_LIST_FILE: z.string().min(1).optional(),
  /** media-store's internal HTTP API (bytes of resources); metadata goes over Redis RPC. */
  MEDIA_STORE_URL: z.string().url().default('http://127.0.0.1:3004'),
  /** Bearer token for media-store's internal API (the same value media-store is given). */
  INTERNAL_SERVICE_TOKEN: z.string().min(16, 'must be at least 16 characters').optional(),
  /** Connections to media-store (one keep-alive agent); each upload or read holds one while it streams. */
  MEDIA_STORE_MAX_SOCKETS: z.coerce.number().int().min(1).max(4096).default(64),
  /** A call to media-store with no bytes moving for this long is cut (a stalled upload, read or answer). */
  MEDIA_STORE_TIMEOUT_MS: z.coerce.number().int().min(100).max(600000).default(30000),
  /** Hard cap on one SDK upload before media-store's per-kind limits (which answer 413 first). */
  MEDIA_UPLOAD_MAX_BYTES: z.coerce
    .number()
    .int()
    .min(1)
    .default(100 * 1024 * 1024),
  ROW_CACHE_TTL_MS: z.coerce.number().int().min(0).max(60000).default(5000),
});

export type Env = z.infer<typeof envSchema>;

/** Fastify's `trustProxy` for TRUSTED_PROXIES (main.ts and the test harness boot with it). */
export const trustProxy = (env: Env): string[] | false =>
  env.TRUSTED_PROXIES.length > 0 ? [...env.TRUSTED_PROXIES] : false;

/** The only reader of process.env in this app. */
export const loadEnv = (env: Record<string, string | undefined> = process.env): Env =>
  loadConfig(envSchema, env);

/** What the screening commands of the CLI read: they need the list file only, not the database. */
export const loadScreeningEnv = (env: Record<string, string | undefined> = process.env) =>
  loadConfig(envSchema.pick({ SANCTIONS_LIST_FILE: true }), env);
