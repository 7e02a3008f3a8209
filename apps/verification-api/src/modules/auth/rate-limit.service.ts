import { Inject, Injectable, type OnModuleDestroy } from '@nestjs/common';
import { PermitLeases, RateLimiter } from '@tessera/auth';
import { APP_CONFIG, Batcher, REQUEST_REDIS, RedisKeys, TooManyRequestsException } from '@tessera/platform';
import type Redis from 'ioredis';
import type { Env } from '../../config/env';

const PER_MINUTE = { windowSeconds: 60, segments: 6 };

/**
 * The two partner-facing limits (docs/decisions/0100):
 * - "auth endpoints": every request that fails authentication counts against its client IP, 20 per minute,
 *   in one bucket for the partner API and another for the operator API; past it the answer is 429, not 401;
 * - every authenticated partner request counts against its credential, 600 per minute.
 *
 * The credential limit runs on every partner request, so it is grouped (docs/decisions/0105): the requests
 * of one credential that arrive together are counted with one script call (`RateLimiter.take`), which admits
 * exactly as many as the window has room for, across replicas, as one call per request would. A busy
 * credential also takes a few permits ahead and admits the next requests from them without a round trip
 * (`PermitLeases`, decision 0428): never more than the limit across replicas; a replica may be refused for
 * at most 50 ms while another holds unused permits (at most 1 % of the limit each).
 */
@Injectable()
export class RateLimitService implements OnModuleDestroy {
  private readonly limiter: RateLimiter;
  private readonly credentials: Batcher<string, number>;
  private readonly credentialLeases: PermitLeases;

  constructor(
    // The platform's auto-pipelined connection: the script calls of one event-loop turn leave in one write.
    @Inject(REQUEST_REDIS) redis: Redis,
    keys: RedisKeys,
    @Inject(APP_CONFIG) private readonly env: Env,
  ) {
    this.limiter = new RateLimiter(redis, keys.key('verification'));
    this.credentialLeases = new PermitLeases(this.limiter, {
      limit: env.RATE_LIMIT_PER_CREDENTIAL_PER_MINUTE,
      ...PER_MINUTE,
    });
    this.credentials = new Batcher({
      run: (apiKeys) => this.takeCredentials(apiKeys),
      maxConcurrentBatches: 4,
    });
  }

  /**
   * Counts a failed authentication from `ip` in the bucket of the API it was aimed at (the partner API and
   * the operator API count apart, so failures on one never lock the other out); throws 429 once the IP is
   * over that bucket's limit.
   */
  async authFailure(ip: string, api: 'partner' | 'operator'): Promise<void> {
    const result = await this.limiter.consume(`authfail:${api}:${ip}`, {
      limit: this.env.AUTH_RATE_LIMIT_PER_MINUTE,
      ...PER_MINUTE,
    });
    if (!result.allowed) throw new TooManyRequestsException(result.retryAfterSeconds);
  }

  /**
   * Counts one hosted-SDK call against its session token (120/min) and its client IP; throws 429 past
   * either. `tokenId` is a digest of the token, never the token itself (it must not reach Redis keys or logs).
   */
  async sdkCall(tokenId: string | undefined, ip: string): Promise<void> {
    const checks = [
      this.limiter.consume(`sdkip:${ip}`, {
        limit: this.env.SDK_RATE_LIMIT_PER_IP_PER_MINUTE,
        ...PER_MINUTE,
      }),
    ];
    if (tokenId) {
      checks.push(
        this.limiter.consume(`sdktok:${tokenId}`, {
          limit: this.env.SDK_RATE_LIMIT_PER_TOKEN_PER_MINUTE,
          ...PER_MINUTE,
        }),
      );
    }
    const refused = (await Promise.all(checks)).find((r) => !r.allowed);
    if (refused) throw new TooManyRequestsException(refused.retryAfterSeconds);
  }

  /** Counts one spawn-kyc call of the credential (sliding hour); throws 429 past the cap. */
  async spawnKyc(apiKey: string): Promise<void> {
    const result = await this.limiter.consume(`spawn:${apiKey}`, {
      limit: this.env.VERIFICATION_SPAWN_PER_HOUR,
      windowSeconds: 3600,
      segments: 60,
    });
    if (!result.allowed) throw new TooManyRequestsException(result.retryAfterSeconds);
  }

  /** Counts one regenerate-link call on a UBO row (sliding 24 hours); throws 429 past the cap. */
  async regenerateLink(uboRowId: string): Promise<void> {
    const result = await this.limiter.consume(`regen:${uboRowId}`, {
      limit: this.env.VERIFICATION_REGENERATE_PER_DAY,
      windowSeconds: 86400,
      segments: 24,
    });
    if (!result.allowed) throw new TooManyRequestsException(result.retryAfterSeconds);
  }

  /** Counts one request of the credential; throws 429 once it is over its limit. */
  async credential(apiKey: string): Promise<void> {
    if (this.credentialLeases.tryLocal(`cred:${apiKey}`)) return;
    const retryAfterSeconds = await this.credentials.submit(apiKey);
    if (retryAfterSeconds > 0) throw new TooManyRequestsException(retryAfterSeconds);
  }

  /** One `take` per distinct credential of the batch; answers 0 (admitted) or a Retry-After per request. */
  private async takeCredentials(apiKeys: string[]): Promise<number[]> {
    const wanted = new Map<string, number>();
    for (const apiKey of apiKeys) wanted.set(apiKey, (wanted.get(apiKey) ?? 0) + 1);
    const taken = new Map(
      await Promise.all(
        [...wanted].map(
          async ([apiKey, n]) => [apiKey, await this.credentialLeases.take(`cred:${apiKey}`, n)] as const,
        ),
      ),
    );
    // The first `admitted` requests of each credential go through, the rest get its Retry-After.
    return apiKeys.map((apiKey) => {
      const take = taken.get(apiKey)!;
      if (take.admitted === 0) return take.retryAfterSeconds;
      take.admitted -= 1;
      return 0;
    });
  }

  /** Permits held ahead go back, so other replicas can use them at once. */
  async onModuleDestroy(): Promise<void> {
    await this.credentialLeases.close();
  }
}
