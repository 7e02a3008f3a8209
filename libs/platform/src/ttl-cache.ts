/** What to drop from a cache: exact keys and/or every key starting with one of the prefixes. */
export interface CacheInvalidation {
  keys?: string[];
  prefixes?: string[];
}

/**
 * A small in-process cache with a time-to-live, for rows read on every request (credentials, levels).
 * Writers invalidate explicitly, on every replica through CacheInvalidationService (Redis pub/sub); the TTL is
 * the backstop for a lost message.
 */
export class TtlCache<V> {
  private readonly entries = new Map<string, { value: V; expiresAt: number }>();
  private generation = 0;

  constructor(
    private readonly ttlMs: number,
    private readonly maxEntries = 10_000,
  ) {}

  /** False when the TTL is 0: nothing is ever stored. */
  get enabled(): boolean {
    return this.ttlMs > 0;
  }

  /** Changes on every invalidation; pass the value read before a load to `set`. */
  get version(): number {
    return this.generation;
  }

  get(key: string): V | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (entry.expiresAt <= Date.now()) {
      this.entries.delete(key);
      return undefined;
    }
    return entry.value;
  }

  /**
   * Stores `value`. With `loadedAt` (the `version` read before loading it), a value loaded before an
   * invalidation that arrived meanwhile is not stored: it may be the old row.
   */
  set(key: string, value: V, loadedAt?: number): void {
    if (this.ttlMs <= 0) return;
    if (loadedAt !== undefined && loadedAt !== this.generation) return;
    if (this.entries.size >= this.maxEntries) this.entries.clear();
    this.entries.set(key, { value, expiresAt: Date.now() + this.ttlMs });
  }

  delete(key: string): void {
    this.invalidate({ keys: [key] });
  }

  /** Drops every key starting with `prefix`. */
  deletePrefix(prefix: string): void {
    this.invalidate({ prefixes: [prefix] });
  }

  invalidate({ keys = [], prefixes = [] }: CacheInvalidation): void {
    this.generation++;
    for (const key of keys) this.entries.delete(key);
    if (prefixes.length === 0) return;
    for (const key of this.entries.keys()) {
      if (prefixes.some((prefix) => key.startsWith(prefix))) this.entries.delete(key);
    }
  }

  clear(): void {
    this.generation++;
    this.entries.clear();
  }
}
