import type { Cache } from "../../ports/cache.js";

/**
 * Read-through caching with single flight: concurrent misses for one key share one load
 * (within this process). Failed loads are not cached; `ttlMs` may depend on the value, which
 * is how negative answers get a shorter life.
 */
export class CachedLoader {
  private readonly inflight = new Map<string, Promise<unknown>>();

  constructor(private readonly cache: Cache) {}

  load<T>(key: string, ttlMs: (value: T) => number, loader: () => Promise<T>): Promise<T> {
    const running = this.inflight.get(key);
    if (running) return running as Promise<T>;
    const promise = (async () => {
      const hit = await this.cache.get<T>(key);
      if (hit !== undefined) return hit;
      const value = await loader();
      await this.cache.set(key, value, ttlMs(value));
      return value;
    })().finally(() => this.inflight.delete(key));
    this.inflight.set(key, promise);
    return promise;
  }
}
