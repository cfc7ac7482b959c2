import type { MiddlewareHandler } from "hono";
import { every } from "hono/combine";
import { etag } from "hono/etag";
import { reuseUntil } from "./answer-cache.js";
import type { AppEnv } from "./types.js";

/**
 * HTTP caching for a lookup the way CDNs and clients expect: a strong `ETag` (SHA-1 of the body,
 * hono/etag) on every successful answer, `If-None-Match` → 304 without a body (X-Request-Id,
 * Cache-Control as on the 200, and the outer middlewares' CORS, X-Request-Id and rate-limit
 * headers), and `Cache-Control`:
 * `public, max-age=N` when the query pins the answer (`pinnedBy` present: an explicit date or
 * year), `no-cache` when it depends on "now" (revalidate every time; the ETag makes that cheap).
 * A pinned answer is also offered to the hot lane for as long as clients are told it is fresh.
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

export function httpCache(pinnedBy: string, maxAgeSec: number, now: () => Date): MiddlewareHandler<AppEnv> {
  const cacheControl: MiddlewareHandler<AppEnv> = async (c, next) => {
    await next();
    if (c.res.status !== 200 && c.res.status !== 304) return;
    const pinned = c.req.query(pinnedBy) !== undefined;
    c.res.headers.set("Cache-Control", pinned ? `public, max-age=${maxAgeSec}` : "no-cache");
    if (pinned) reuseUntil(c, now().getTime() + maxAgeSec * 1000);
  };
  return every(cacheControl, etag());
}
