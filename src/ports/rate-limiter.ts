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

export interface LimitRule {
  /** Namespace of the counters, e.g. "demo" or "key". */
  name: string;
  points: number;
  durationSec: number;
}

/** A fixed-window counter store shared by every limit in the app (in-process or Redis). */
export interface RateLimiter {
  consume(rule: LimitRule, key: string, points?: number): Promise<LimitDecision>;
  /** Whether the shared store (if any) is reachable; in-process limiters are always ready. */
  ready(): Promise<boolean>;
  close(): Promise<void>;
}
