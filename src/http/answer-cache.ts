import type { Context, MiddlewareHandler } from "hono";
import { matchedRoutes } from "hono/route";
import { LRUCache } from "lru-cache";
import type { AppEnv } from "./types.js";

/**
 * Serialised answers of the public lookups, by normalised request target, for the hot lane
 * (hot-lane.ts) to send again without running the app. An entry is only ever made from a `200`
 * the app itself produced for a keyless GET, and only when the route said how long that exact
 * answer holds (`reuseUntil`): a moon for an explicit date forever-ish, VAT for "today" until the
 * country's next midnight, a cached weather report for a few seconds. Bounded by bytes (LRU).
 */
export interface Answer {
  /** The response headers as the app produced them, minus per-request and framing headers. */
  headers: readonly [string, string][];
  body: Buffer;
  etag?: string;
  /** Epoch ms after which the entry is not used. */
  until: number;
  /** The route's label for logs and metrics (e.g. `/v1/moon`). */
  route: string;
}

/**
 * Headers another request must not inherit: they are per request (the envelope's, envelope.ts,
 * which the hot lane adds afresh) or framing.
 */
const NOT_STORED = new Set(["x-request-id", "ratelimit", "content-length", "date", "connection", "keep-alive"]);

/**
 * The request target with its query parameters in a stable order (by name; a repeated name keeps
 * its values' order), so `?b=2&a=1` and `?a=1&b=2` share an entry. No decoding: two encodings of
 * one value are two entries, which costs memory, never correctness.
 */
export function normaliseTarget(target: string): string {
  const q = target.indexOf("?");
  if (q === -1) return target;
  const pairs = target
    .slice(q + 1)
    .split("&")
    .filter((p) => p !== "");
  if (pairs.length < 2) return pairs.length === 0 ? target.slice(0, q) : `${target.slice(0, q)}?${pairs[0]}`;
  const name = (p: string) => {
    const eq = p.indexOf("=");
    return eq === -1 ? p : p.slice(0, eq);
  };
  pairs.sort((a, b) => {
    const x = name(a);
    const y = name(b);
    return x < y ? -1 : x > y ? 1 : 0;
  });
  return `${target.slice(0, q)}?${pairs.join("&")}`;
}

export class AnswerCache {
  private readonly entries: LRUCache<string, Answer>;

  constructor(maxBytes: number) {
    this.entries = new LRUCache<string, Answer>({
      maxSize: maxBytes,
      sizeCalculation: (a) => a.body.length + 256 + a.headers.reduce((n, [k, v]) => n + k.length + v.length, 0),
    });
  }

  get(target: string, now: number): Answer | undefined {
    const hit = this.entries.get(target);
    if (hit === undefined) return undefined;
    if (hit.until > now) return hit;
    this.entries.delete(target);
    return undefined;
  }

  set(target: string, answer: Answer): void {
    this.entries.set(target, answer);
  }

  get size(): number {
    return this.entries.size;
  }
}

/** A route's promise that the answer it is producing holds for this exact request target until `until` (epoch ms). */
export function reuseUntil(c: Context<AppEnv>, until: number): void {
  c.set("reuseUntil", until);
}

/**
 * Records every answer a route marked with `reuseUntil`: a 200 to a keyless GET that came in over
 * node:http. Mounted after the limits and before the HTTP-cache headers are added, so the stored
 * headers include ETag and Cache-Control but not the per-request RateLimit or X-Request-Id.
 */
export function recordAnswers(cache: AnswerCache, now: () => Date): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    await next();
    const until = c.get("reuseUntil");
    if (until === undefined || c.res.status !== 200 || c.req.method !== "GET") return;
    const incoming = c.env?.incoming;
    if (!incoming?.url || c.req.header("authorization") !== undefined || until <= now().getTime()) return;
    const body = Buffer.from(await c.res.clone().arrayBuffer());
    const headers: [string, string][] = [];
    c.res.headers.forEach((value, name) => {
      if (!NOT_STORED.has(name)) headers.push([name, value]);
    });
    cache.set(normaliseTarget(incoming.url), {
      headers,
      body,
      etag: c.res.headers.get("etag") ?? undefined,
      until,
      route: matchedRoutes(c).findLast((r) => r.method !== "ALL")?.path ?? c.req.path,
    });
  };
}
