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
import type { Context, MiddlewareHandler, TypedResponse } from "hono";
import { RETAINED_304_HEADERS } from "hono/etag";
import { LRUCache } from "lru-cache";
import type { Config } from "../config.js";
import { sha1Hex } from "../lib/hash.js";
import { reuseUntil } from "./answer-cache.js";
import { type Contract, type Documented, documented, HEADERS_MAX, type HeaderDoc } from "./contract.js";
import { ApiError } from "./errors.js";
import type { AppEnv } from "./types.js";

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

const ETAG: HeaderDoc = {
  description: "Strong validator of the body (SHA-1).",
  schema: { type: "string", maxLength: 42, pattern: '^"[0-9a-f]{40}"$' },
  component: true,
};

/** What `httpCache` adds to a lookup's document: the tag and Cache-Control, If-None-Match and its 304. */
function cacheContract(pinnedBy: string, maxAgeSec: number): Contract {
  const cacheControl: HeaderDoc = {
    description: `\`public, max-age=${maxAgeSec}\` when the query gives \`${pinnedBy}\` (it pins the answer), else \`no-cache\`.`,
    schema: { type: "string", maxLength: 64 },
  };
  const headers = { ETag: ETAG, "Cache-Control": cacheControl };
  return {
    applies: (op) => op.method === "GET" || op.method === "HEAD",
    stamps: [{ on: (status) => status === "200", headers }],
    answers: { "304": { description: "Not modified: the ETag matched; no body.", headers } },
    parameters: [
      {
        in: "header",
        name: "If-None-Match",
        description: "An ETag from an earlier answer: 304 when the answer is the same.",
        schema: { type: "string", maxLength: HEADERS_MAX },
      },
    ],
  };
}

/** One lookup's caching middleware (module comment); `pinnedBy`: the query parameter that pins its answer. */
export function httpCache(pinnedBy: string, maxAgeSec: number, now: () => Date): Documented<MiddlewareHandler<AppEnv>> {
  // One middleware, in the order hono/etag under a Cache-Control wrapper had it: the tag (and a
  // 304), then Cache-Control on a 200 or 304. The routes tag their own answers (taggedJson);
  // an untagged one is hashed in-line (hono/etag's default digest clones the response, streams
  // its body and hashes it on WebCrypto's thread pool: ~30 % of a lookup's time under load).
  return documented<MiddlewareHandler<AppEnv>>(
    async (c, next) => {
      const ifNoneMatch = c.req.header("If-None-Match");
      if (ifNoneMatch !== undefined && ifNoneMatch.length > HEADERS_MAX)
        throw new ApiError(
          "invalid_body",
          `header "If-None-Match" is invalid: must be at most ${HEADERS_MAX.toLocaleString("en")} characters`,
        );
      await next();
      const method = c.req.method;
      if ((method === "GET" || method === "HEAD") && c.res.ok) {
        const own = c.res.headers.get("ETag");
        const tag = own ?? etagOf(new Uint8Array(await c.res.clone().arrayBuffer()));
        if (ifNoneMatch !== undefined && etagMatches(tag, ifNoneMatch)) {
          await c.res.body?.cancel();
          // As hono/etag answers it: the Context copies the 200's headers over, and only those a
          // 304 must carry (RFC 9110 §15.4.5) stay.
          c.res = new Response(null, { status: 304, statusText: "Not Modified", headers: { ETag: tag } });
          for (const key of Array.from(c.res.headers.keys())) if (!RETAINED_304.has(key)) c.res.headers.delete(key);
        } else if (own === null) c.res.headers.set("ETag", tag);
      }
      if (c.res.status !== 200 && c.res.status !== 304) return;
      const pinned = c.req.query(pinnedBy) !== undefined;
      c.res.headers.set("Cache-Control", pinned ? `public, max-age=${maxAgeSec}` : "no-cache");
      if (pinned) reuseUntil(c, now().getTime() + maxAgeSec * 1000);
    },
    cacheContract(pinnedBy, maxAgeSec),
  );
}

/** The headers a 304 keeps from the 200 it stands for (hono/etag's list). */
const RETAINED_304 = new Set(RETAINED_304_HEADERS);

/**
 * Whether `If-None-Match` names `etag` (weak comparison, RFC 9110 §13.1.2): `*`, or any listed tag
 * equal to ours with or without `W/`. The one rule for the app (httpCache) and the hot lane.
 */
export function etagMatches(etag: string, ifNoneMatch: string): boolean {
  if (ifNoneMatch === "*") return true;
  const ours = etag.startsWith("W/") ? etag.slice(2) : etag;
  return ifNoneMatch.match(/"[^"]*"/g)?.some((tag) => tag === ours) ?? false;
}

/** The strong ETag hono/etag would give a body: the hex SHA-1 of its bytes (of a string: its UTF-8 bytes), quoted. */
export function etagOf(body: string | Uint8Array): string {
  return `"${sha1Hex(body)}"`;
}

/** A JSON answer's UTF-8 bytes and their ETag (`etagOf(bytes)`), made once and sent as often as asked. */
export interface TaggedJson {
  bytes: Uint8Array<ArrayBuffer>;
  etag: string;
}

/** A route's own finished answers (bytes and ETag) by query, up to 2,000. */
export class KeptAnswers {
  private readonly entries = new LRUCache<string, TaggedJson>({ max: 2_000 });

  get(key: string): TaggedJson | undefined {
    return this.entries.get(key);
  }

  /**
   * Keeps `answer` under `key`, its bytes copied out of Node's shared 8 KB allocation pool (where
   * `taggedText` puts them): a kept slice would hold on to a whole pool chunk.
   */
  set(key: string, answer: TaggedJson): void {
    this.entries.set(key, { bytes: new Uint8Array(answer.bytes), etag: answer.etag });
  }
}

/**
 * A route's kept answers (`KeptAnswers`); none when the answer cache is off
 * (`ANSWER_CACHE_MB=0`), so every call builds its answer again.
 */
export function keptAnswers(config: Pick<Config, "ANSWER_CACHE_MB">): KeptAnswers | undefined {
  return config.ANSWER_CACHE_MB > 0 ? new KeptAnswers() : undefined;
}

/**
 * JSON text as sent, tagged: encoded once, and the bytes hashed and sent (a string would be
 * encoded to UTF-8 three times: to hash it, to count its bytes and to write it).
 */
export function taggedText(json: string): TaggedJson {
  return taggedBytes(Buffer.from(json, "utf8"));
}

/** JSON bytes as sent, tagged. */
export function taggedBytes(bytes: Uint8Array<ArrayBuffer>): TaggedJson {
  return { bytes, etag: etagOf(bytes) };
}

/** `body` serialised as `c.json` would send it, with its ETag. */
export function tagged(body: unknown): TaggedJson {
  return taggedText(JSON.stringify(body));
}

/** A 200 answer for a route under `httpCache` from bytes made earlier (`tagged`), typed as the body they hold. */
export function keptJson<T>(c: Context, kept: TaggedJson): TypedResponse<T, 200, "json"> {
  return c.body(kept.bytes, 200, { "Content-Type": "application/json", ETag: kept.etag }) as unknown as TypedResponse<
    T,
    200,
    "json"
  >;
}

/**
 * A 200 JSON answer for a route under `httpCache`, tagged from the bytes it sends (so the tag
 * costs one in-line hash and no second pass over the response).
 */
export function taggedJson<T>(c: Context, body: T): TypedResponse<T, 200, "json"> {
  return keptJson<T>(c, tagged(body));
}
