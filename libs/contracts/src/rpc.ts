import { z } from 'zod';

/** Request/response patterns between services over the Redis transport. Versioned like jobs. */
export const RPC = {
  /** Every service answers with its name and the time; used by health tooling and tests. */
  PING: (service: string) => `${service}.ping.v1`,
} as const;

export const pingReply = z.object({ service: z.string(), at: z.string() });
export type PingReply = z.infer<typeof pingReply>;
