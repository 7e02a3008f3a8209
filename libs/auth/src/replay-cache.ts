import type Redis from 'ioredis';

/**
 * Single-use signatures: the tuple (keyId, timestamp, signature) is claimed with SET NX and expires after
 * `ttlSeconds` (60 s in the custody contract). A second claim of the same tuple fails.
 */
export class ReplayCache {
  constructor(
    private readonly redis: Redis,
    private readonly keyPrefix: string,
    private readonly ttlSeconds = 60,
  ) {}

  /** True the first time a tuple is seen within the TTL, false on every later use. */
  async claim(keyId: string, timestamp: string, signature: string): Promise<boolean> {
    const result = await this.redis.set(
      `${this.keyPrefix}:replay:${keyId}:${timestamp}:${signature}`,
      '1',
      'EX',
      this.ttlSeconds,
      'NX',
    );
    return result === 'OK';
  }
}
