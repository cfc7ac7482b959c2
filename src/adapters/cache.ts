import { randomUUID } from "node:crypto";
import type { Redis } from "ioredis";
import { LRUCache } from "lru-cache";
import type { Cache, FlightFailure, FlightState, Flights } from "../ports/cache.js";

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
  readonly flights: Flights;

  constructor(
    private readonly redis: Redis,
    private readonly opts: {
      prefix?: string;
      onFallback?: () => void;
      local?: MemoryCache;
      /** How long a claimed load holds the others back at most (default 10 s). */
      flightLeaseMs?: number;
    } = {},
  ) {
    this.local = opts.local ?? new MemoryCache();
    this.flights = new RedisFlights(redis, (key) => this.key(`flight:${key}`), opts.flightLeaseMs ?? 10_000);
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

/** How long a failed load's marker stays for its waiters to read (they look every 20 ms). */
const FAILED_MARKER_MS = 1000;

/** Claims the flight unless a live one holds it (a failed one's marker does not). Nil: claimed. */
const CLAIM = `local v = redis.call('GET', KEYS[1])
if v and string.sub(v, 1, 7) ~= 'failed ' then return v end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return false`;

/** Ends the flight ARGV[1] if it is still the one holding the key: deleted, or marked failed. */
const FINISH = `if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
if ARGV[2] == '' then return redis.call('DEL', KEYS[1]) end
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
return 1`;

/**
 * Flights as one Redis key per cache key: the loader's token while it loads (with a lease), then
 * deleted, or briefly `failed <token> <kind> <upstream>` so its waiters fail as it did. A new
 * request is never failed by that marker: it claims a new load. Redis errors grant the claim.
 */
class RedisFlights implements Flights {
  constructor(
    private readonly redis: Redis,
    private readonly key: (key: string) => string,
    private readonly leaseMs: number,
  ) {}

  async claim(key: string): Promise<{ leader: boolean; token: string }> {
    const token = randomUUID();
    try {
      const holder = (await this.redis.eval(CLAIM, 1, this.key(key), token, this.leaseMs)) as string | null;
      return holder === null ? { leader: true, token } : { leader: false, token: holder };
    } catch {
      return { leader: true, token };
    }
  }

  async state(key: string, token: string): Promise<FlightState> {
    let v: string | null;
    try {
      v = await this.redis.get(this.key(key));
    } catch {
      return "over";
    }
    if (v === token) return "running";
    const [word, of, kind, ...upstream] = v?.split(" ") ?? [];
    if (word !== "failed" || of !== token) return "over";
    return { failed: { kind: kind as FlightFailure["kind"], upstream: upstream.join(" ") } };
  }

  async finish(key: string, token: string, failure?: FlightFailure): Promise<void> {
    const marker = failure ? `failed ${token} ${failure.kind} ${failure.upstream}` : "";
    await this.redis.eval(FINISH, 1, this.key(key), token, marker, FAILED_MARKER_MS).catch(() => {});
  }
}
