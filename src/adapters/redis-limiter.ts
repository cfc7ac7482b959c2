// The Redis limiter, in a module of its own: the composition root imports it (and so
// rate-limiter-flexible) only when REDIS_URL selects Redis.
import type { Redis } from "ioredis";
import { type RateLimiterAbstract, RateLimiterRedis, RateLimiterRes } from "rate-limiter-flexible";
import type { Metrics } from "../ports/metrics.js";
import { decide, type LimitDecision, type LimitRule, type RateLimiter } from "../ports/rate-limiter.js";
import { MemoryRateLimiter, ruleId } from "./memory-limiter.js";

type Factory = (rule: LimitRule) => RateLimiterAbstract;

/** One rate-limiter-flexible instance per distinct rule, created on first use. */
class RuleCache {
  private readonly limiters = new Map<string, RateLimiterAbstract>();
  constructor(private readonly make: Factory) {}
  get(rule: LimitRule): RateLimiterAbstract {
    const id = ruleId(rule);
    let limiter = this.limiters.get(id);
    if (!limiter) {
      limiter = this.make(rule);
      this.limiters.set(id, limiter);
    }
    return limiter;
  }
}

async function spend(limiter: RateLimiterAbstract, rule: LimitRule, key: string, points: number) {
  // Spending nothing only reads the count (no write, no window started).
  if (points === 0) {
    const res = await limiter.get(key);
    return decide(rule, res?.consumedPoints ?? 0, res ? res.msBeforeNext : rule.durationSec * 1000);
  }
  try {
    const res = await limiter.consume(key, points);
    return decide(rule, res.consumedPoints, res.msBeforeNext);
  } catch (err) {
    if (err instanceof RateLimiterRes) return decide(rule, err.consumedPoints, err.msBeforeNext);
    throw err;
  }
}

/**
 * Counters shared through Redis. When Redis is unreachable (or too slow: the client has a
 * command timeout), the decision is taken by an in-process limiter instead and counted in
 * `rate_limiter_fallback_total`: requests keep flowing under local limits, and shared
 * counting resumes by itself when Redis is back.
 */
export class RedisRateLimiter implements RateLimiter {
  private readonly shared: RuleCache;
  /** Bounded (see MemoryRateLimiter), so a flood while Redis is away cannot grow the heap without end. */
  private readonly local = new MemoryRateLimiter();

  constructor(
    private readonly redis: Redis,
    private readonly metrics: Metrics,
  ) {
    this.shared = new RuleCache(
      (rule) =>
        new RateLimiterRedis({
          storeClient: redis,
          keyPrefix: `almanac:rl:${rule.name}`,
          points: rule.points,
          duration: rule.durationSec,
          rejectIfRedisNotReady: true,
        }),
    );
  }

  async consume(rule: LimitRule, key: string, points = 1): Promise<LimitDecision> {
    try {
      return await spend(this.shared.get(rule), rule, key, points);
    } catch {
      this.metrics.limiterFallback(rule.name);
      return this.local.consume(rule, key, points);
    }
  }

  async refund(rule: LimitRule, key: string, points = 1): Promise<void> {
    await this.shared
      .get(rule)
      .reward(key, points)
      .catch(() => this.local.refund(rule, key, points));
  }

  async reset(rule: LimitRule, key: string): Promise<void> {
    await Promise.all([
      this.shared
        .get(rule)
        .delete(key)
        .catch(() => false),
      this.local.reset(rule, key),
    ]);
  }

  async ready(): Promise<boolean> {
    try {
      return (await this.redis.ping()) === "PONG";
    } catch {
      return false;
    }
  }

  async close(): Promise<void> {
    // The Redis client is owned by whoever built it (deps), which quits it.
  }
}
