import { baseEnvSchema, envBoolean, loadConfig, requestTimeoutMs } from '@tessera/platform';
import { z } from 'zod';

const MB = 1024 * 1024;

export const envSchema = baseEnvSchema.extend({
  PORT: z.coerce.number().int().min(0).max(65535).default(3004),
  /**
   * As verification-api's (decision 0499): an upload reaches media-store as fast as the hosted page sends it, so
   * it gets as long (15 minutes).
   */
  HTTP_REQUEST_TIMEOUT_MS: requestTimeoutMs(900_000),
  /** Bearer token of the internal HTTP API (verification-api sends it); compared in constant time. */
  INTERNAL_SERVICE_TOKEN: z.string().min(16, 'must be at least 16 characters'),
  /**
   * HMAC key of staged-upload tickets (decision 0460), so that INTERNAL_SERVICE_TOKEN rotates without failing the
   * uploads in flight. Unset: INTERNAL_SERVICE_TOKEN keys them, as before. Rotation: docs/deploy.md.
   */
  MEDIA_TICKET_SECRET: z.string().min(16, 'must be at least 16 characters').optional(),
  /** The ticket key before a rotation: still accepted to open tickets, never used to seal one. */
  MEDIA_TICKET_SECRET_PREVIOUS: z.string().min(16, 'must be at least 16 characters').optional(),
  /**
   * A staged upload neither committed nor discarded after this many seconds is swept: its bytes are removed
   * and a later commit answers 410 (decision 0460). It must exceed the longest stage-to-commit gap of
   * verification-api (its lock wait plus MEDIA_STORE_TIMEOUT_MS, under two minutes): one hour by default. The
   * `fs` driver's `.tmp/` files untouched as long (uploads a killed process left) go in the same sweep (0498).
   */
  MEDIA_STAGED_TTL_SECONDS: z.coerce.number().int().min(300).max(604800).default(3600),
  /** How often each replica sweeps expired staged uploads; 0 never (another replica or process sweeps). */
  MEDIA_STAGED_SWEEP_INTERVAL_MS: z.coerce.number().int().min(0).default(60000),
  /** Staged uploads one sweep transaction removes at most; a sweep repeats while it fills whole batches. */
  MEDIA_STAGED_SWEEP_BATCH: z.coerce.number().int().min(1).max(1000).default(100),
  /** Where blobs live: `fs` (MEDIA_FS_ROOT) or `s3` (the S3_* settings; MinIO in docker compose). */
  MEDIA_STORAGE: z.enum(['fs', 's3']).default('fs'),
  MEDIA_FS_ROOT: z.string().default('.tessera/media'),
  /** Upload size limits: images and PDF, and video (issue 9: 20 MB and 100 MB). */
  MEDIA_MAX_IMAGE_BYTES: z.coerce
    .number()
    .int()
    .min(1)
    .default(20 * MB),
  MEDIA_MAX_VIDEO_BYTES: z.coerce
    .number()
    .int()
    .min(1)
    .default(100 * MB),
  /**
   * Uploads one slot of one enrollment may hold, superseded ones included (decision 0446): a link holder cannot
   * fill the storage by uploading again and again. Past it 409 and nothing is stored.
   */
  MEDIA_MAX_UPLOADS_PER_SLOT: z.coerce.number().int().min(1).default(20),
  S3_ENDPOINT: z.string().url().optional(),
  S3_REGION: z.string().default('us-east-1'),
  S3_BUCKET: z.string().default('tessera-media'),
  S3_ACCESS_KEY_ID: z.string().optional(),
  S3_SECRET_ACCESS_KEY: z.string().optional(),
  /** Path-style URLs (`endpoint/bucket/key`), as MinIO and s3rver need. */
  S3_FORCE_PATH_STYLE: envBoolean.default(true),
  /**
   * How long a connection to S3 may take to open, and a request's socket may stay idle (nothing sent or
   * received), before the call is given up as storage unavailable (decision 0493). An idle bound, not a total
   * one: a slow 100 MB upload that keeps moving is never cut. With the SDK's 3 attempts a hung S3 answers 503
   * after about 3 × this: keep that well under verification-api's MEDIA_STORE_TIMEOUT_MS (30 s), or its relay
   * gives up first with a 504.
   */
  S3_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(5_000),
});

export type Env = z.infer<typeof envSchema>;

/** The only reader of process.env in this app. */
export const loadEnv = (env: Record<string, string | undefined> = process.env): Env =>
  loadConfig(envSchema, env);
