import { Inject, Injectable, Logger, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { APP_CONFIG, createRedis, REDIS, RedisKeys, withTimeout } from '@tessera/platform';
import type Redis from 'ioredis';
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { type CacheInvalidation, TtlCache } from '../../common/ttl-cache';
import type { Env } from '../../config/env';

/** One invalidation on the channel: which cache, what to drop, and which process sent it. */
const invalidationMessage = z.object({
  cache: z.string(),
  keys: z.array(z.string()).optional(),
  prefixes: z.array(z.string()).optional(),
  origin: z.string(),
});

const PUBLISH_TIMEOUT_MS = 1000;

/**
 * The in-process row caches (credentials, levels) and their cross-replica invalidation (decision 0104).
 * A writer calls `invalidate`: this process drops the entries at once, and a Redis PUBLISH on
 * `<QUEUE_PREFIX>:verification:cache-invalidation` makes every other replica drop them too. ROW_CACHE_TTL_MS
 * stays the backstop for a message that never arrives (Redis down, subscriber reconnecting).
 */
@Injectable()
export class CacheInvalidationService implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger(CacheInvalidationService.name);
  private readonly caches = new Map<string, TtlCache<unknown>>();
  private readonly channel: string;
  private readonly origin = randomUUID();
  private subscriber: Redis | null = null;

  constructor(
    @Inject(REDIS) private readonly redis: Redis,
    keys: RedisKeys,
    @Inject(APP_CONFIG) private readonly env: Env,
  ) {
    this.channel = keys.key('verification', 'cache-invalidation');
  }

  /** A cache named `name` with the configured TTL, whose invalidations reach every replica. */
  cache<V>(name: string): TtlCache<V> {
    const cache = new TtlCache<V>(this.env.ROW_CACHE_TTL_MS);
    this.caches.set(name, cache as TtlCache<unknown>);
    return cache;
  }

  /** Subscribes before the app serves, so no invalidation published after boot is missed. */
  async onModuleInit(): Promise<void> {
    // A process that caches nothing has nothing to drop (it still publishes its own writes).
    if (this.env.ROW_CACHE_TTL_MS <= 0) return;
    const subscriber = createRedis(this.env.REDIS_URL, { connectionName: 'verification-api-cache-sub' });
    this.subscriber = subscriber;
    let connected = false;
    subscriber.on('ready', () => {
      // Messages published while the connection was down are lost: start over from the database.
      if (connected) for (const cache of this.caches.values()) cache.clear();
      connected = true;
    });
    subscriber.on('error', (err: Error) =>
      this.logger.warn({ err: err.message }, 'cache invalidation subscriber: Redis error'),
    );
    subscriber.on('message', (_channel: string, raw: string) => this.apply(raw));
    await subscriber.subscribe(this.channel);
  }

  async onApplicationShutdown(): Promise<void> {
    const subscriber = this.subscriber;
    this.subscriber = null;
    if (!subscriber) return;
    if (subscriber.status === 'ready') await subscriber.quit().catch(() => subscriber.disconnect());
    else subscriber.disconnect();
  }

  /**
   * Drops entries of cache `name` here and on every other replica. Call it after the write committed. A failed
   * publish is logged, not thrown: the write stands, and other replicas catch up within ROW_CACHE_TTL_MS.
   */
  async invalidate(name: string, what: CacheInvalidation): Promise<void> {
    this.caches.get(name)?.invalidate(what);
    const message = JSON.stringify({ cache: name, ...what, origin: this.origin });
    try {
      await withTimeout(this.redis.publish(this.channel, message), PUBLISH_TIMEOUT_MS, 'cache invalidation');
    } catch (err) {
      this.logger.warn(
        { err: (err as Error).message, cache: name },
        'cache invalidation not published; other replicas catch up within ROW_CACHE_TTL_MS',
      );
    }
  }

  private apply(raw: string): void {
    let parsed: unknown;
    try {
      parsed = JSON.parse(raw);
    } catch {
      return;
    }
    const message = invalidationMessage.safeParse(parsed);
    if (!message.success || message.data.origin === this.origin) return;
    this.caches.get(message.data.cache)?.invalidate(message.data);
  }
}
