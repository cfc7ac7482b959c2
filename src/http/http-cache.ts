import type { MiddlewareHandler } from "hono";
import { every } from "hono/combine";
import { etag } from "hono/etag";
import type { AppEnv } from "./types.js";

/**
 * HTTP caching for a lookup the way CDNs and clients expect: a strong `ETag` (SHA-1 of the body,
 * hono/etag) on every successful answer, `If-None-Match` → 304 without a body (X-Request-Id,
 * rate-limit and CORS headers still sent by the outer middlewares), and `Cache-Control`:
 * `public, max-age=N` when the query pins the answer (`pinnedBy` present: an explicit date or
 * year), `no-cache` when it depends on "now" (revalidate every time; the ETag makes that cheap).
 * No `Vary`: the body depends on the URL alone (a key changes limits, never the answer).
 * Errors are never cached or tagged.
 */
const DAY_SEC = 86_400;

/**
 * The deterministic lookups and what pins each one's answer, in one place: app.ts mounts
 * `httpCache` on them and the OpenAPI document declares their ETag / 304 from the same list.
 * VAT's dataset changes with a release: an hour, then revalidate.
 */
export const CACHED_LOOKUPS: readonly { path: string; pinnedBy: string; maxAgeSec: number }[] = [
  { path: "/v1/moon", pinnedBy: "date", maxAgeSec: DAY_SEC },
  { path: "/v1/sun", pinnedBy: "date", maxAgeSec: DAY_SEC },
  { path: "/v1/holidays", pinnedBy: "year", maxAgeSec: DAY_SEC },
  { path: "/v1/holidays/working-days", pinnedBy: "date", maxAgeSec: DAY_SEC },
  { path: "/v1/vat", pinnedBy: "date", maxAgeSec: 3600 },
];

export function httpCache(pinnedBy: string, maxAgeSec: number): MiddlewareHandler<AppEnv> {
  const cacheControl: MiddlewareHandler<AppEnv> = async (c, next) => {
    await next();
    if (!c.res.ok) return;
    const pinned = c.req.query(pinnedBy) !== undefined;
    c.res.headers.set("Cache-Control", pinned ? `public, max-age=${maxAgeSec}` : "no-cache");
  };
  return every(cacheControl, etag());
}
