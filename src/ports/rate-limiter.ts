/** The outcome of spending points against one key of one limit. */
export interface LimitDecision {
  allowed: boolean;
  /** Points allowed per window. */
  limit: number;
  /** Points left in the current window (0 when refused). */
  remaining: number;
  /** Milliseconds until the window resets. */
  resetMs: number;
}

/**
 * The decision every backend gives for a window in which `used` points have been spent (a refused
 * spend counts too, as in rate-limiter-flexible, so `used` may exceed the rule's points).
 */
export function decide(rule: LimitRule, used: number, resetMs: number): LimitDecision {
  const allowed = used <= rule.points;
  return { allowed, limit: rule.points, remaining: allowed ? rule.points - used : 0, resetMs: Math.max(0, resetMs) };
}

export interface LimitRule {
  /** Namespace of the counters, e.g. "demo" or "key". */
  name: string;
  points: number;
  durationSec: number;
}

/**
 * A fixed-window counter store shared by every limit in the app (Redis, the embedded SQLite file,
 * or in-process). `consume` spends and decides in one atomic step on every backend, so callers
 * spend first and act after: a burst can never get more than `points` through.
 */
export interface RateLimiter {
  /** Spends `points` (default 1) and decides; 0 points only reads the count (nothing is written). */
  consume(rule: LimitRule, key: string, points?: number): Promise<LimitDecision>;
  /** Gives back points spent earlier in the current window (a reservation that turned out free). */
  refund(rule: LimitRule, key: string, points?: number): Promise<void>;
  /** Forgets the key's count (its window starts afresh). */
  reset(rule: LimitRule, key: string): Promise<void>;
  /** Whether the shared store (if any) is reachable; in-process limiters are always ready. */
  ready(): Promise<boolean>;
  close(): Promise<void>;
}
