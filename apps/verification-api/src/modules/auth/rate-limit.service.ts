import { Inject, Injectable, type OnApplicationShutdown } from '@nestjs/common';
import { RateLimiter } from '@tessera/auth';
import { APP_CONFIG, REDIS, RedisKeys, TooManyRequestsException } from '@tessera/platform';
import type Redis from 'ioredis';
import type { Env } from '../../config/env';

/**
 * The two partner-facing limits (docs/decisions/0100):
 * - "auth endpoints": every request that fails authentication (partner headers or operator bearer) counts
 *   against its client IP, 20 per minute; past it the answer is 429 instead of 401;
 * - every authenticated partner request counts against its credential, 600 per minute.
 */
@Injectable()
export class RateLimitService implements OnApplicationShutdown {
  private readonly limiter: RateLimiter;
  /**
   * Its own connection with auto-pipelining: every partner request runs the limit script, and the scripts of
   * all requests in one event-loop turn then leave in one socket write instead of one write each.
   * (Not the shared REDIS connection, which BullMQ also uses.)
   */
  private readonly redis: Redis;

  constructor(
    @Inject(REDIS) redis: Redis,
    keys: RedisKeys,
    @Inject(APP_CONFIG) private readonly env: Env,
  ) {
    this.redis = redis.duplicate({ enableAutoPipelining: true, connectionName: 'verification-rate-limits' });
    this.limiter = new RateLimiter(this.redis, keys.key('verification'));
  }

  async onApplicationShutdown(): Promise<void> {
    // QUIT waits for a reply; with Redis unreachable that would hang the shutdown.
    if (this.redis.status === 'ready') await this.redis.quit().catch(() => this.redis.disconnect());
    else this.redis.disconnect();
  }

  /** Counts a failed authentication from `ip`; throws 429 once the IP is over its limit. */
  async authFailure(ip: string): Promise<void> {
    const result = await this.limiter.consume(`authfail:${ip}`, {
      limit: this.env.AUTH_RATE_LIMIT_PER_MINUTE,
      windowSeconds: 60,
      segments: 6,
    });
    if (!result.allowed) throw new TooManyRequestsException(result.retryAfterSeconds);
  }

  async credential(apiKey: string): Promise<void> {
    const result = await this.limiter.consume(`cred:${apiKey}`, {
      limit: this.env.RATE_LIMIT_PER_CREDENTIAL_PER_MINUTE,
      windowSeconds: 60,
      segments: 6,
    });
    if (!result.allowed) throw new TooManyRequestsException(result.retryAfterSeconds);
  }
}
