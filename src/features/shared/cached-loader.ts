import type { Cache, Flights } from "../../ports/cache.js";
import { UpstreamError } from "../../ports/upstream-error.js";

/** How often a waiter looks for the value another instance is loading. */
const POLL_MS = 20;

/**
 * Read-through caching with single flight: concurrent misses for one key share one load within
 * this process and, when the cache is shared between instances (`cache.flights`), across all of
 * them: the others wait for the loader's value in the cache, and fail with its failure. Failed
 * loads are not cached; `ttlMs` may depend on the value, which is how negative answers get a
 * shorter life.
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
      const flights = this.cache.flights;
      if (!flights) return this.fill(key, ttlMs, loader);
      const claim = await flights.claim(key);
      if (!claim.leader) {
        const shared = await this.follow<T>(flights, key, claim.token);
        if (shared !== undefined) return shared;
      }
      return this.fill(key, ttlMs, loader, claim.leader ? { flights, token: claim.token } : undefined);
    })().finally(() => this.inflight.delete(key));
    this.inflight.set(key, promise);
    return promise;
  }

  private async fill<T>(
    key: string,
    ttlMs: (value: T) => number,
    loader: () => Promise<T>,
    flight?: { flights: Flights; token: string },
  ): Promise<T> {
    let value: T;
    try {
      value = await loader();
    } catch (err) {
      const failure = err instanceof UpstreamError ? { upstream: err.upstream, kind: err.kind } : undefined;
      await flight?.flights.finish(key, flight.token, failure);
      throw err;
    }
    await this.cache.set(key, value, ttlMs(value));
    await flight?.flights.finish(key, flight.token);
    return value;
  }

  /**
   * Waits for another instance's load `token` of `key`: its value, or its failure (thrown as an
   * UpstreamError, not counted again). Undefined when it ended without either (it lapsed, or the
   * value could not be read back), so the caller loads itself.
   */
  private async follow<T>(flights: Flights, key: string, token: string): Promise<T | undefined> {
    for (;;) {
      await new Promise((r) => setTimeout(r, POLL_MS));
      const hit = await this.cache.get<T>(key);
      if (hit !== undefined) return hit;
      const state = await flights.state(key, token);
      if (state === "running") continue;
      // It may have stored its value between the two reads.
      if (state === "over") return this.cache.get<T>(key);
      throw new UpstreamError(state.failed.upstream, state.failed.kind, "failed on another instance");
    }
  }
}
