import type { MiddlewareHandler } from "hono";
import { cors } from "hono/cors";

/**
 * CORS for the public API (/v1/*): any origin may call it from a browser without credentials
 * (keys travel in `Authorization`, never in cookies, so `*` exposes nothing a server could not
 * already fetch). Preflight `OPTIONS` answers 204 with the methods and headers the API takes, and
 * the headers a client needs to read are exposed. Classify is meant for servers (a key in a web
 * page is a leaked key) but a browser preflight for it must not fail.
 */
export function publicCors(): MiddlewareHandler {
  return cors({
    origin: "*",
    allowMethods: ["GET", "HEAD", "POST", "OPTIONS"],
    allowHeaders: ["Authorization", "Content-Type", "Idempotency-Key"],
    exposeHeaders: ["X-Request-Id", "RateLimit", "RateLimit-Policy", "Retry-After", "Idempotent-Replayed", "ETag"],
    maxAge: 86_400,
  });
}
