import { baseEnvSchema, loadConfig } from '@tessera/platform';
import { z } from 'zod';

export const envSchema = baseEnvSchema.extend({
  PORT: z.coerce.number().int().min(0).max(65535).default(3004),
  INTERNAL_SERVICE_TOKEN: z.string().min(16, 'must be at least 16 characters').optional(),
  MEDIA_STORAGE: z.enum(['fs', 's3']).default('fs'),
  MEDIA_FS_ROOT: z.string().default('.tessera/media'),
  S3_ENDPOINT: z.string().url().optional(),
  S3_REGION: z.string().default('us-east-1'),
  S3_BUCKET: z.string().default('tessera-media'),
  S3_ACCESS_KEY_ID: z.string().optional(),
  S3_SECRET_ACCESS_KEY: z.string().optional(),
});

export type Env = z.infer<typeof envSchema>;

/** The only reader of process.env in this app. */
export const loadEnv = (env: Record<string, string | undefined> = process.env): Env =>
  loadConfig(envSchema, env);
