import type { IncomingMessage } from "node:http";
import type { MiddlewareHandler } from "hono";
import type { KeyStore } from "../ports/key-store.js";
import type { LimitDecision, LimitRule, RateLimiter } from "../ports/rate-limiter.js";
import { ApiError } from "./errors.js";
import { authenticate } from "./key-auth.js";
import { ratePolicy, rateState } from "./rate-limit-headers.js";
import type { AppEnv } from "./types.js";

export const DEMO_TIER_REASON = "DEMO_HOURLY_LIMIT";
const WINDOW_SEC = 3600;

export interface DemoTierOptions {
  limiter: RateLimiter;
  /** Calls per hour per client IP (DEMO_HOURLY_LIMIT). */
  hourlyLimit: number;
  /** Verifies keys sent on GETs; unset: every GET is served under the demo tier. */
  keys?: KeyStore;
  /** Paths that are never counted (the API description). */
  exempt?: string[];
  /**
   * Decisions the hot lane (hot-lane.ts) already took for requests it then handed to the app
   * (a refusal among them), so they are not counted twice.
   */
  counted?: WeakMap<IncomingMessage, LimitDecision>;
}

export const demoRule = (hourlyLimit: number): LimitRule => ({
  name: "demo",
  points: hourlyLimit,
  durationSec: WINDOW_SEC,
});

function headersOf(rule: LimitRule, d: LimitDecision): Record<string, string> {
  return { "RateLimit-Policy": ratePolicy(rule), RateLimit: rateState(rule, d) };
}

/**
 * The demo tier (README "Demo tier"): every GET/HEAD under /v1 but the `exempt` paths counts against a per-IP
 * hourly budget shared through the limiter (Redis when configured). A GET that sends an
 * `Authorization` header is verified instead: a valid key is not counted, a rejected one gets
 * the key's 401/403/429, and when the verifier is down the call falls back to the demo tier
 * (README "Demo tier").
 */
export function demoTier(opts: DemoTierOptions): MiddlewareHandler<AppEnv> {
  const rule = demoRule(opts.hourlyLimit);
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

    const incoming = c.env?.incoming;
    const decision =
      (incoming && opts.counted?.get(incoming)) ?? (await opts.limiter.consume(rule, c.get("clientKey")));
    const headers = headersOf(rule, decision);
    if (!decision.allowed) {
      throw new ApiError(
        "rate_limited",
        `Demo tier limit of ${rule.points} calls per hour reached; retry later or send an API key.`,
        {
          reason: DEMO_TIER_REASON,
          headers: { ...headers, "Retry-After": String(Math.max(1, Math.ceil(decision.resetMs / 1000))) },
        },
      );
    }
    await next();
    for (const [k, v] of Object.entries(headers)) c.res.headers.set(k, v);
  };
}
