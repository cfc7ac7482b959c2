import SQLite from "better-sqlite3";
import type { Redis } from "ioredis";
import {
  type RateLimiterAbstract,
  RateLimiterMemory,
  RateLimiterRedis,
  RateLimiterRes,
  RateLimiterSQLite,
} from "rate-limiter-flexible";
import { privateDatabaseFile } from "../db/database.js";
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

/** A rate-limiter-flexible backend: spend, refund and reset on one limiter per rule. */
abstract class FlexibleRateLimiter implements RateLimiter {
  protected abstract readonly rules: RuleCache;
  consume(rule: LimitRule, key: string, points = 1): Promise<LimitDecision> {
    return spend(this.rules.get(rule), rule, key, points);
  }
  async refund(rule: LimitRule, key: string, points = 1): Promise<void> {
    await this.rules.get(rule).reward(key, points);
  }
  async reset(rule: LimitRule, key: string): Promise<void> {
    await this.rules.get(rule).delete(key);
  }
  async ready(): Promise<boolean> {
    return true;
  }
  async close(): Promise<void> {}
}

/** In-process counters: exact on one process (tests, and the fallback while Redis is unreachable). */
export class MemoryRateLimiter extends FlexibleRateLimiter {
  protected readonly rules = new RuleCache(memoryFactory);
}

const SQLITE_TABLE = "rate_limits";
const SWEEP_EVERY_MS = 5 * 60_000;

/**
 * Counters in `limits.db` in the data directory (without Redis): one UPSERT … RETURNING per
 * decision (rate-limiter-flexible's RateLimiterSQLite), so a count is atomic, survives a restart
 * or a `kill -9`, and is shared by the workers of `WEB_CONCURRENCY` (each opens the same file;
 * SQLite's write lock orders them). The file is separate from the main database and written with
 * `synchronous = NORMAL`: a commit is not fsynced, so it costs microseconds, and WAL mode still
 * keeps every commit through a process crash (only a power cut can lose the last few counts).
 */
export class SqliteRateLimiter extends FlexibleRateLimiter {
  private readonly db: SQLite.Database;
  private readonly sweeper: NodeJS.Timeout;
  protected readonly rules: RuleCache;

  constructor(dataDir: string) {
    super();
    const db = new SQLite(privateDatabaseFile(dataDir, "limits.db"));
    db.pragma("journal_mode = WAL");
    db.pragma("synchronous = NORMAL");
    db.pragma("busy_timeout = 2000");
    db.exec(
      `CREATE TABLE IF NOT EXISTS ${SQLITE_TABLE} (key TEXT PRIMARY KEY, points INTEGER NOT NULL DEFAULT 0, expire INTEGER)`,
    );
    this.db = db;
    this.rules = new RuleCache(
      (rule) =>
        new RateLimiterSQLite({
          storeClient: db,
          storeType: "better-sqlite3",
          tableName: SQLITE_TABLE,
          tableCreated: true,
          keyPrefix: rule.name,
          points: rule.points,
          duration: rule.durationSec,
        }),
    );
    const sweep = db.prepare(`DELETE FROM ${SQLITE_TABLE} WHERE expire < ?`);
    this.sweeper = setInterval(() => sweep.run(Date.now()), SWEEP_EVERY_MS).unref();
  }

  override async close(): Promise<void> {
    clearInterval(this.sweeper);
    this.db.close();
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

  async refund(rule: LimitRule, key: string, points = 1): Promise<void> {
    await this.shared
      .get(rule)
      .reward(key, points)
      .catch(() => this.local.get(rule).reward(key, points));
  }

  async reset(rule: LimitRule, key: string): Promise<void> {
    await Promise.all([
      this.shared
        .get(rule)
        .delete(key)
        .catch(() => false),
      this.local.get(rule).delete(key),
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
