import {
  Inject,
  Injectable,
  Logger,
  Module,
  type OnApplicationShutdown,
  type OnModuleInit,
} from '@nestjs/common';
import type Redis from 'ioredis';
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { closeConnection, createRedis, RedisKeys, withTimeout } from './redis';
import { PLATFORM_OPTIONS, type PlatformOptions, REDIS } from './tokens';
import { type CacheInvalidation, TtlCache } from './ttl-cache';

/** One invalidation on the channel: which cache, what to drop, and which process sent it. */
const invalidationMessage = z.object({
  cache: z.string(),
  keys: z.array(z.string()).optional(),
  prefixes: z.array(z.string()).optional(),
  origin: z.string(),
});

const PUBLISH_TIMEOUT_MS = 1000;

/**
 * In-process row caches (credentials, levels, per-tenant settings) and their cross-replica invalidation
 * (decision 0104). A writer calls `invalidate`: this process drops the entries at once, and a Redis PUBLISH
 * on `<QUEUE_PREFIX>:<service>:cache-invalidation` makes every other process of that service (replicas, its
 * CLI) drop them too. Each cache's TTL stays the backstop for a message that never arrives (Redis down,
 * subscriber reconnecting).
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
    @Inject(PLATFORM_OPTIONS) private readonly platform: PlatformOptions,
  ) {
    this.channel = keys.key(serviceFamily(platform.service), 'cache-invalidation');
  }

  /** A cache named `name` whose entries live `ttlMs`, and whose invalidations reach every replica. */
  cache<V>(name: string, ttlMs: number, maxEntries?: number): TtlCache<V> {
    const cache = new TtlCache<V>(ttlMs, maxEntries);
    this.caches.set(name, cache as TtlCache<unknown>);
    return cache;
  }

  /** Subscribes before the app serves, so no invalidation published after boot is missed. */
  async onModuleInit(): Promise<void> {
    // A process that caches nothing has nothing to drop (it still publishes its own writes).
    if (![...this.caches.values()].some((cache) => cache.enabled)) return;
    const subscriber = createRedis(this.platform.env.REDIS_URL, {
      connectionName: `${this.platform.service}-cache-sub`,
    });
    this.subscriber = subscriber;
    let connected = false;
    subscriber.on('ready', () => {
      // Messages published while the connection was down are lost: start over from the database.
      if (connected) for (const cache of this.caches.values()) cache.clear();
      connected = true;
    });
    subscriber.on('message', (_channel: string, raw: string) => this.apply(raw));
    await subscriber.subscribe(this.channel);
  }

  async onApplicationShutdown(): Promise<void> {
    const subscriber = this.subscriber;
    this.subscriber = null;
    if (!subscriber) return;
    await closeConnection(subscriber);
  }

  /**
   * Drops entries of cache `name` here and on every other replica. Call it after the write committed. A failed
   * publish is logged, not thrown: the write stands, and other replicas catch up within the cache's TTL.
   */
  async invalidate(name: string, what: CacheInvalidation): Promise<void> {
    this.caches.get(name)?.invalidate(what);
    const message = JSON.stringify({ cache: name, ...what, origin: this.origin });
    try {
      await withTimeout(this.redis.publish(this.channel, message), PUBLISH_TIMEOUT_MS, 'cache invalidation');
    } catch (err) {
      this.logger.warn(
        { err: (err as Error).message, cache: name },
        'cache invalidation not published; other replicas catch up within the cache TTL',
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

/** `verification-api` and `verification-api-cli` share one channel: the CLI's writes reach the API's caches. */
function serviceFamily(service: string): string {
  return service.replace(/(-(api|cli|worker))+$/, '');
}

/** Import where a service caches rows that its writers must invalidate on every replica. */
@Module({
  providers: [CacheInvalidationService],
  exports: [CacheInvalidationService],
})
export class CacheInvalidationModule {}
