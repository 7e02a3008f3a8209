import { baseEnvSchema, loadConfig } from '@tessera/platform';
import { z } from 'zod';

export const envSchema = baseEnvSchema.extend({
  PORT: z.coerce.number().int().min(0).max(65535).default(3002),
  WORKER_PORT: z.coerce.number().int().min(0).max(65535).default(3012),
});

export type Env = z.infer<typeof envSchema>;

/** The only reader of process.env in this app. */
export const loadEnv = (env: Record<string, string | undefined> = process.env): Env =>
  loadConfig(envSchema, env);
