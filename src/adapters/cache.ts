import type { Redis } from "ioredis";
import { LRUCache } from "lru-cache";
import type { Cache } from "../ports/cache.js";

/** In-process LRU with per-entry expiry. Exact on one process, per process with several. */
export class MemoryCache implements Cache {
  private readonly lru: LRUCache<string, { value: unknown }>;

  constructor(maxEntries = 10_000) {
    this.lru = new LRUCache({ max: maxEntries });
  }

  async get<T>(key: string): Promise<T | undefined> {
    return this.lru.get(key)?.value as T | undefined;
  }

  async set<T>(key: string, value: T, ttlMs: number): Promise<void> {
    this.lru.set(key, { value }, { ttl: ttlMs });
  }
}

/**
 * Shared through Redis (JSON under `prefix`). When Redis errors or is too slow (the client
 * has a command timeout and no offline queue), the in-process cache answers instead and
 * `onFallback` is called: lookups keep working, only sharing between instances pauses.
 */
export class RedisCache implements Cache {
  private readonly local: MemoryCache;

  constructor(
    private readonly redis: Redis,
    private readonly opts: { prefix?: string; onFallback?: () => void; local?: MemoryCache } = {},
  ) {
    this.local = opts.local ?? new MemoryCache();
  }

  private key(key: string): string {
    return `${this.opts.prefix ?? "almanac:cache:"}${key}`;
  }

  async get<T>(key: string): Promise<T | undefined> {
    let raw: string | null;
    try {
      raw = await this.redis.get(this.key(key));
    } catch {
      this.opts.onFallback?.();
      return this.local.get<T>(key);
    }
    if (raw === null) return undefined;
    try {
      return JSON.parse(raw) as T;
    } catch {
      return undefined;
    }
  }

  async set<T>(key: string, value: T, ttlMs: number): Promise<void> {
    try {
      await this.redis.set(this.key(key), JSON.stringify(value), "PX", Math.max(1, Math.round(ttlMs)));
    } catch {
      this.opts.onFallback?.();
      await this.local.set(key, value, ttlMs);
    }
  }
}
