import type { MiddlewareHandler } from "hono";
import type { KeyStore } from "../ports/key-store.js";
import type { LimitRule, RateLimiter } from "../ports/rate-limiter.js";
import { ApiError } from "./errors.js";
import { authenticate } from "./key-auth.js";
import type { AppEnv } from "./types.js";

export const DEMO_TIER_REASON = "DEMO_HOURLY_LIMIT";
const WINDOW_SEC = 3600;

export interface DemoTierOptions {
  limiter: RateLimiter;
  /**
   * DEMO_HOURLY_LIMIT calls per hour per client (`demoRule`): the envelope's own, so the RateLimit
   * headers it writes describe the rule that decided.
   */
  rule: LimitRule;
  /** Verifies keys sent on GETs; unset: every GET is served under the demo tier. */
  keys?: KeyStore;
  /** Paths that are never counted (the API description). */
  exempt?: string[];
}

export const demoRule = (hourlyLimit: number): LimitRule => ({
  name: "demo",
  points: hourlyLimit,
  durationSec: WINDOW_SEC,
});

/**
 * The demo tier (README "Demo tier"): every GET/HEAD under /v1 but the `exempt` paths counts against a per-IP
 * hourly budget shared through the limiter (Redis when configured). A GET that sends an
 * `Authorization` header is verified instead: a valid key is not counted, a rejected one gets
 * the key's 401/403/429, and when the verifier is down the call falls back to the demo tier
 * (README "Demo tier"). The decision is kept on the request's exchange, from which the envelope
 * (envelope.ts) puts `RateLimit-Policy` and `RateLimit` on the answer, whatever it is; a
 * decision the hot lane already took (it hands a refusal on to the app) is not taken again.
 */
export function demoTier(opts: DemoTierOptions): MiddlewareHandler<AppEnv> {
  const { rule } = opts;
  const exempt = new Set(opts.exempt ?? []);

  return async (c, next) => {
    if ((c.req.method !== "GET" && c.req.method !== "HEAD") || exempt.has(c.req.path)) return next();

    const authorization = c.req.header("authorization");
    if (authorization !== undefined && opts.keys) {
      try {
        await authenticate(opts.keys, authorization);
        return next();
      } catch (err) {
        if (!(err instanceof ApiError) || err.code !== "unkey_unavailable") throw err;
      }
    }

    const ex = c.get("exchange");
    ex.rate ??= await opts.limiter.consume(rule, ex.key);
    const decision = ex.rate;
    if (!decision.allowed) {
      throw new ApiError(
        "rate_limited",
        `Demo tier limit of ${rule.points} calls per hour reached; retry later or send an API key.`,
        {
          reason: DEMO_TIER_REASON,
          headers: { "Retry-After": String(Math.max(1, Math.ceil(decision.resetMs / 1000))) },
        },
      );
    }
    return next();
  };
}
