// The Redis limiter, in a module of its own: the composition root imports it (and so ioredis)
// only when REDIS_URL or REDIS_SENTINELS selects Redis.
import type { Redis } from "ioredis";
import type { Metrics } from "../ports/metrics.js";
import { decide, type LimitDecision, type LimitRule, type RateLimiter } from "../ports/rate-limiter.js";
import { MemoryRateLimiter } from "./memory-limiter.js";

/**
 * rate-limiter-flexible's `RateLimiterRedis` step (its `rlflxIncr` script: start the window if
 * there is none, add the points, read the TTL), run for each key of the batch in order; a step of
 * 0 points only reads (`GET` and `PTTL`, as its `get`). KEYS are the keys, ARGV two per key: the
 * points and the window in whole seconds (0: a window that never ends, as its MULTI INCRBY PTTL).
 * Returns the count and the TTL of each key in turn (the count is nil for a read of no window).
 */
const STEPS = `local out = {}
for i = 1, #KEYS do
  local key, points, secs = KEYS[i], ARGV[2 * i - 1], ARGV[2 * i]
  if points == '0' then
    out[2 * i - 1] = redis.call('get', key)
    out[2 * i] = redis.call('pttl', key)
  elseif secs == '0' then
    out[2 * i - 1] = redis.call('incrby', key, points)
    out[2 * i] = redis.call('pttl', key)
  else
    redis.call('set', key, 0, 'EX', secs, 'NX')
    out[2 * i - 1] = redis.call('incrby', key, points)
    local ttl = redis.call('pttl', key)
    if ttl == -1 then
      redis.call('expire', key, secs)
      ttl = 1000 * secs
    end
    out[2 * i] = ttl
  end
end
return out`;
const COMMAND = "almanacLimitSteps";
/** The most steps in one script call, so that one call holds Redis for a bounded time. */
const MOST_STEPS = 500;

type Steps = (keys: number, ...args: string[]) => Promise<(string | number | null)[]>;

/** A spend (points > 0), a read (0) or a refund (< 0) waiting for the end of the turn. */
interface Step {
  rule: LimitRule;
  key: string;
  points: number;
  resolve: (decision: LimitDecision) => void;
}

/** The default of `prefix`: REDIS_KEY_PREFIX's default and `rl:`. */
export const LIMITER_PREFIX = "almanac:rl:";

/**
 * Counters shared through Redis, on rate-limiter-flexible's keys and with its step, so instances
 * of an older build (which run it through `RateLimiterRedis`) count with this one.
 *
 * One command per turn: the spends, reads (0 points) and refunds asked for during one turn of the
 * event loop are sent together at its end (`setImmediate`, as the embedded limiter's group commit)
 * as one script call that runs each key's step in the order they were asked, so a burst costs one
 * command written to the socket instead of one per request, and each count is still one atomic
 * step on its key. A reset (`DEL`) first sends the turn's steps asked before it.
 *
 * When Redis is unreachable (or too slow: the client has a command timeout), the decision is taken
 * by an in-process limiter instead and counted in `rate_limiter_fallback_total` — for a batch that
 * fails, spend by spend: requests keep flowing under local limits, and shared counting resumes by
 * itself when Redis is back.
 */
export class RedisRateLimiter implements RateLimiter {
  /** Bounded (see MemoryRateLimiter), so a flood while Redis is away cannot grow the heap without end. */
  private readonly local = new MemoryRateLimiter();
  private readonly steps: Steps;
  private pending: Step[] = [];
  private scheduled = false;

  /**
   * `prefix`: what every key starts with (REDIS_KEY_PREFIX and `rl:`). A key is then
   * rate-limiter-flexible's: its `keyPrefix` (`<prefix><rule>`), a colon, the key.
   */
  constructor(
    private readonly redis: Redis,
    private readonly metrics: Metrics,
    private readonly prefix = LIMITER_PREFIX,
  ) {
    redis.defineCommand(COMMAND, { lua: STEPS });
    const steps = (redis as unknown as Record<string, Steps>)[COMMAND] as Steps;
    this.steps = steps.bind(redis);
  }

  private redisKey(rule: LimitRule, key: string): string {
    return `${this.prefix}${rule.name}:${key}`;
  }

  consume(rule: LimitRule, key: string, points = 1): Promise<LimitDecision> {
    return this.queue(rule, key, points);
  }

  async refund(rule: LimitRule, key: string, points = 1): Promise<void> {
    // rate-limiter-flexible's `reward`: the same step with the points taken away.
    await this.queue(rule, key, -points);
  }

  async reset(rule: LimitRule, key: string): Promise<void> {
    this.flush();
    await Promise.all([this.redis.del(this.redisKey(rule, key)).catch(() => 0), this.local.reset(rule, key)]);
  }

  async ready(): Promise<boolean> {
    try {
      return (await this.redis.ping()) === "PONG";
    } catch {
      return false;
    }
  }

  async close(): Promise<void> {
    // The turn's steps go out before whoever owns the Redis client (deps) quits it.
    this.flush();
  }

  private queue(rule: LimitRule, key: string, points: number): Promise<LimitDecision> {
    return new Promise((resolve) => {
      const step = { rule, key, points, resolve };
      // rate-limiter-flexible refuses to send a fraction of a point; so does this batch.
      if (!Number.isInteger(points)) return void this.fallback(step);
      this.pending.push(step);
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  /** Sends the steps asked for so far, in one script call per `MOST_STEPS`. */
  private flush(): void {
    this.scheduled = false;
    const all = this.pending;
    this.pending = [];
    for (let i = 0; i < all.length; i += MOST_STEPS) void this.send(all.slice(i, i + MOST_STEPS));
  }

  private async send(batch: Step[]): Promise<void> {
    let out: (string | number | null)[];
    try {
      // As rate-limiter-flexible's `rejectIfRedisNotReady`: no command while the client is not ready.
      if (this.redis.status !== "ready") throw new Error("Redis connection is not ready");
      const keys = batch.map((s) => this.redisKey(s.rule, s.key));
      const args = batch.flatMap((s) => [String(s.points), String(Math.floor(s.rule.durationSec))]);
      out = await this.steps(batch.length, ...keys, ...args);
    } catch {
      for (const step of batch) void this.fallback(step);
      return;
    }
    for (const [i, { rule, resolve }] of batch.entries()) {
      const count = out[2 * i];
      // A read of a key with no window: nothing spent, a whole window ahead.
      if (count === null || count === undefined) resolve(decide(rule, 0, rule.durationSec * 1000));
      else resolve(decide(rule, Number(count), Number(out[2 * i + 1])));
    }
  }

  /** The step on the in-process counters (a refund is not a decision: it is not counted as a fallback). */
  private async fallback({ rule, key, points, resolve }: Step): Promise<void> {
    if (points < 0) {
      await this.local.refund(rule, key, -points);
      resolve(await this.local.consume(rule, key, 0));
      return;
    }
    this.metrics.limiterFallback(rule.name);
    resolve(await this.local.consume(rule, key, points));
  }
}
