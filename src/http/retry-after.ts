import type { MiddlewareHandler } from "hono";
import { type Documented, documented, retryAfterHeader } from "./contract.js";
import { setResponseHeader } from "./envelope.js";

/** Seconds a 429 asks the client to wait when whoever refused did not say. */
export const DEFAULT_RETRY_AFTER_SEC = 60;

/**
 * Every 429 leaving the app carries `Retry-After` (RFC 9110 §10.2.3). Our own limiters set an
 * exact value; this catches the rest — better-auth's limiter says `X-Retry-After`, a page may say
 * nothing — so a client never has to guess.
 */
export function retryAfterOn429(): Documented<MiddlewareHandler> {
  const stamp: MiddlewareHandler = async (c, next) => {
    await next();
    if (c.res.status !== 429 || c.res.headers.has("Retry-After")) return;
    const seconds = c.res.headers.get("X-Retry-After") ?? String(DEFAULT_RETRY_AFTER_SEC);
    setResponseHeader(c, "Retry-After", seconds);
  };
  return documented(stamp, {
    stamps: [
      { on: (status) => status === "429", headers: { "Retry-After": { ...retryAfterHeader(), component: true } } },
    ],
  });
}
