import type { MiddlewareHandler } from "hono";
import type { LimitRule, RateLimiter } from "../ports/rate-limiter.js";
import { ApiError } from "./errors.js";
import type { AppEnv } from "./types.js";

export const INVALID_KEY_REASON = "INVALID_KEY_LIMIT";
const WINDOW_SEC = 600;

/**
 * Throttles key guessing: each answer 401 `INVALID` (a key was sent and rejected) costs the client
 * IP one point of `limit` per 10 minutes; once they are spent, every request from that IP that sends an
 * `Authorization` header is refused with 429 before its key is even looked at (so a guesser
 * costs neither the database nor Unkey). Requests without a key are not affected, and the
 * counters are shared through the limiter (Redis across instances).
 */
export function invalidKeyThrottle(limiter: RateLimiter, limit: number): MiddlewareHandler<AppEnv> {
  const rule: LimitRule = { name: "invalid-key", points: limit, durationSec: WINDOW_SEC };
  return async (c, next) => {
    if (c.req.header("authorization") === undefined) return next();
    const ip = c.get("clientKey");
    const peek = await limiter.consume(rule, ip, 0);
    if (!peek.allowed || peek.remaining <= 0) throw refused(limit, peek.resetMs);
    await next();
    if (c.error instanceof ApiError && c.error.code === "unauthorized" && c.error.reason === "INVALID") {
      await limiter.consume(rule, ip, 1);
    }
  };
}

function refused(limit: number, resetMs: number): ApiError {
  return new ApiError(
    "rate_limited",
    `Too many requests with rejected API keys from this address (${limit} in 10 minutes); retry later.`,
    { reason: INVALID_KEY_REASON, headers: { "Retry-After": String(Math.max(1, Math.ceil(resetMs / 1000))) } },
  );
}
