import { createHash } from "node:crypto";
import type { Context, MiddlewareHandler, TypedResponse } from "hono";
import { every } from "hono/combine";
import { etag } from "hono/etag";
import { sha1Hex } from "../lib/hash.js";
import { reuseUntil } from "./answer-cache.js";
import type { AppEnv } from "./types.js";

/**
 * HTTP caching for a lookup the way CDNs and clients expect: a strong `ETag` (hex SHA-1 of the body,
 * as hono/etag writes it; the route sets it with `taggedJson` from the string it sends) on every
 * successful answer, `If-None-Match` → 304 without a body (X-Request-Id,
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
  // The routes tag their own answers (taggedJson). hono/etag's default digest of an untagged one
  // clones the response, streams its body and hashes it on WebCrypto's thread pool: ~30 % of a
  // lookup's time under load. An untagged answer still gets the same tag, hashed in-line.
  return every(cacheControl, etag({ generateDigest: sha1 }));
}

function sha1(body: Uint8Array): ArrayBuffer {
  const d = createHash("sha1").update(body).digest();
  return d.buffer.slice(d.byteOffset, d.byteOffset + d.byteLength) as ArrayBuffer;
}

/** The strong ETag hono/etag would give `json`: the hex SHA-1 of its UTF-8 bytes, quoted. */
export function etagOf(json: string): string {
  return `"${sha1Hex(json)}"`;
}

/**
 * A 200 JSON answer for a route under `httpCache`, tagged from the string it sends (so the tag
 * costs one in-line hash and no second pass over the response). `json` defaults to the bytes
 * `c.json(body)` would send; a route that serialises parts once passes its own.
 */
export function taggedJson<T>(c: Context, body: T, json = JSON.stringify(body)): TypedResponse<T, 200, "json"> {
  return c.body(json, 200, { "Content-Type": "application/json", ETag: etagOf(json) }) as unknown as TypedResponse<
    T,
    200,
    "json"
  >;
}
