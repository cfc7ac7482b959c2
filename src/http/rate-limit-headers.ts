import type { KeyRateLimitState } from "../ports/key-store.js";
import type { LimitDecision, LimitRule } from "../ports/rate-limiter.js";

/** IETF RateLimit-Policy / RateLimit headers (draft-ietf-httpapi-ratelimit-headers), one policy each. */

/** The RateLimit-Policy header of a rule (one string per rule). */
export const ratePolicy = (rule: LimitRule) => `"${rule.name}";q=${rule.points};w=${rule.durationSec}`;

/** The RateLimit header of one decision. */
export const rateState = (rule: LimitRule, d: Pick<LimitDecision, "remaining" | "resetMs">) =>
  `"${rule.name}";r=${d.remaining};t=${Math.max(1, Math.ceil(d.resetMs / 1000))}`;

/**
 * The headers of a key's rate limit as its verification reported it (the key's own, or its
 * account's, whichever binds first). Without the window's length (a store that does not say it)
 * only `RateLimit` is sent.
 */
export function keyRateLimitHeaders(state: KeyRateLimitState): Record<string, string> {
  const rule = { name: state.name ?? "key", points: state.limit, durationSec: state.durationSec ?? 0 };
  const current = { RateLimit: rateState(rule, state) };
  return state.durationSec ? { "RateLimit-Policy": ratePolicy(rule), ...current } : current;
}
