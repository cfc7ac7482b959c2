import SQLite from "better-sqlite3";
import type { Redis } from "ioredis";
import { type RateLimiterAbstract, RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from "rate-limiter-flexible";
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

const SWEEP_EVERY_MS = 5 * 60_000;

/**
 * Counters in `limits.db` in the data directory (without Redis): each decision is one
 * `INSERT … ON CONFLICT DO UPDATE … RETURNING` that starts or adds to the key's window and reads
 * the total back, so a count is atomic, survives a restart or a `kill -9`, and is shared by the
 * workers of `WEB_CONCURRENCY` (each opens the same file; SQLite's write lock orders them). The
 * file is separate from the main database and written with `synchronous = NORMAL`: a commit is
 * not fsynced, so it stays cheap (statements are prepared once), and WAL mode still keeps every
 * commit through a process crash (only a power cut can lose the last few counts). The rows and
 * windows are rate-limiter-flexible's (`RateLimiterSQLite`'s table, fixed windows).
 */
export class SqliteRateLimiter implements RateLimiter {
  private readonly db: SQLite.Database;
  private readonly sweeper: NodeJS.Timeout;
  private readonly spend: SQLite.Statement<
    [{ key: string; points: number; expire: number; now: number }],
    { points: number; expire: number }
  >;
  private readonly giveBack: SQLite.Statement<[{ key: string; points: number; now: number }]>;
  private readonly forget: SQLite.Statement<[string]>;

  constructor(dataDir: string) {
    const db = new SQLite(privateDatabaseFile(dataDir, "limits.db"));
    db.pragma("journal_mode = WAL");
    db.pragma("synchronous = NORMAL");
    db.pragma("busy_timeout = 2000");
    db.exec(
      "CREATE TABLE IF NOT EXISTS rate_limits (key TEXT PRIMARY KEY, points INTEGER NOT NULL, expire INTEGER NOT NULL)",
    );
    this.db = db;
    // A live window adds up, an expired one starts again.
    this.spend = db.prepare(
      `INSERT INTO rate_limits (key, points, expire) VALUES (@key, @points, @expire)
       ON CONFLICT(key) DO UPDATE SET
         points = CASE WHEN expire > @now THEN points + excluded.points ELSE excluded.points END,
         expire = CASE WHEN expire > @now THEN expire ELSE excluded.expire END
       RETURNING points, expire`,
    );
    this.giveBack = db.prepare(
      "UPDATE rate_limits SET points = max(points - @points, 0) WHERE key = @key AND expire > @now",
    );
    this.forget = db.prepare("DELETE FROM rate_limits WHERE key = ?");
    const sweep = db.prepare("DELETE FROM rate_limits WHERE expire < ?");
    this.sweeper = setInterval(() => sweep.run(Date.now()), SWEEP_EVERY_MS).unref();
  }

  async consume(rule: LimitRule, key: string, points = 1): Promise<LimitDecision> {
    const now = Date.now();
    const row = this.spend.get({ key: keyOf(rule, key), points, expire: now + rule.durationSec * 1000, now });
    if (!row) throw new Error("rate_limits upsert returned no row");
    const allowed = row.points <= rule.points;
    return {
      allowed,
      limit: rule.points,
      remaining: allowed ? rule.points - row.points : 0,
      resetMs: Math.max(0, row.expire - now),
    };
  }

  async refund(rule: LimitRule, key: string, points = 1): Promise<void> {
    this.giveBack.run({ key: keyOf(rule, key), points, now: Date.now() });
  }

  async reset(rule: LimitRule, key: string): Promise<void> {
    this.forget.run(keyOf(rule, key));
  }

  async ready(): Promise<boolean> {
    return true;
  }

  async close(): Promise<void> {
    clearInterval(this.sweeper);
    this.db.close();
  }
}

/** rate-limiter-flexible's key layout (`prefix:key`), with the rule's name as the prefix (as on Redis). */
const keyOf = (rule: LimitRule, key: string) => `${rule.name}:${key}`;

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
