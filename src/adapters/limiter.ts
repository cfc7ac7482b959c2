import type { Redis } from "ioredis";
import {
  type RateLimiterAbstract,
  RateLimiterCluster,
  RateLimiterMemory,
  RateLimiterRedis,
  RateLimiterRes,
} from "rate-limiter-flexible";
import type { Metrics } from "../ports/metrics.js";
import type { LimitDecision, LimitRule, RateLimiter } from "../ports/rate-limiter.js";

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

const ruleId = (rule: LimitRule) => `${rule.name}:${rule.points}:${rule.durationSec}`;

async function spend(limiter: RateLimiterAbstract, rule: LimitRule, key: string, points: number) {
  try {
    const res = await limiter.consume(key, points);
    return decision(rule, res, true);
  } catch (err) {
    if (err instanceof RateLimiterRes) return decision(rule, err, false);
    throw err;
  }
}

function decision(rule: LimitRule, res: RateLimiterRes, allowed: boolean): LimitDecision {
  return {
    allowed,
    limit: rule.points,
    remaining: allowed ? Math.max(0, res.remainingPoints) : 0,
    resetMs: Math.max(0, res.msBeforeNext),
  };
}

const memoryFactory: Factory = (rule) =>
  new RateLimiterMemory({ keyPrefix: rule.name, points: rule.points, duration: rule.durationSec });

/** In-process counters: exact on one process, per process under WEB_CONCURRENCY > 1. */
export class MemoryRateLimiter implements RateLimiter {
  private readonly rules = new RuleCache(memoryFactory);
  consume(rule: LimitRule, key: string, points = 1): Promise<LimitDecision> {
    return spend(this.rules.get(rule), rule, key, points);
  }
  async ready(): Promise<boolean> {
    return true;
  }
  async close(): Promise<void> {}
}

/**
 * Counters kept by the cluster primary for every worker process (WEB_CONCURRENCY > 1 without
 * Redis), so N workers on one machine still count one limit. The primary must have created a
 * RateLimiterClusterMaster (see cluster.ts).
 */
export class ClusterRateLimiter implements RateLimiter {
  private readonly rules = new RuleCache(
    (rule) =>
      new RateLimiterCluster({
        keyPrefix: ruleId(rule),
        points: rule.points,
        duration: rule.durationSec,
        timeoutMs: 1000,
      }),
  );
  consume(rule: LimitRule, key: string, points = 1): Promise<LimitDecision> {
    return spend(this.rules.get(rule), rule, key, points);
  }
  async ready(): Promise<boolean> {
    return true;
  }
  async close(): Promise<void> {}
}

/**
 * Counters shared through Redis. When Redis is unreachable (or too slow: the client has a
 * command timeout), the decision is taken by an in-process limiter instead and counted in
 * `rate_limiter_fallback_total`: requests keep flowing under local limits, and shared
 * counting resumes by itself when Redis is back.
 */
export class RedisRateLimiter implements RateLimiter {
  private readonly shared: RuleCache;
  private readonly local = new RuleCache(memoryFactory);

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
      return spend(this.local.get(rule), rule, key, points);
    }
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
