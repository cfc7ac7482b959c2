import type { KeyRateLimitState } from "../ports/key-store.js";
import type { LimitDecision, LimitRule } from "../ports/rate-limiter.js";
import type { HeaderDoc } from "./contract.js";

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

/** `keyRateLimitHeaders` as the document declares them. */
export const KEY_RATE_LIMIT_DOCS: Record<string, HeaderDoc> = {
  "RateLimit-Policy": {
    description:
      "The key's rate limit (`key`), or its account's (`account`) when that one binds first: " +
      '`"account";q=10;w=60` is 10 calls per 60 s. Sent when the key or its account has a rate limit.',
    schema: { type: "string", maxLength: 128, example: '"account";q=10;w=60' },
  },
  RateLimit: {
    description: "Calls left in that window (`r`) and seconds until it resets (`t`).",
    schema: { type: "string", maxLength: 128, example: '"account";r=9;t=60' },
  },
};
