import type { MiddlewareHandler } from "hono";
import { cors } from "hono/cors";
import type { HeaderDoc } from "./contract.js";

const EXPOSED = ["X-Request-Id", "RateLimit", "RateLimit-Policy", "Retry-After", "Idempotent-Replayed", "ETag"];

/** The CORS headers of every non-preflight /v1 response (envelope.ts puts them on). */
export const CORS_HEADERS: readonly (readonly [string, string])[] = [
  ["access-control-allow-origin", "*"],
  ["access-control-expose-headers", EXPOSED.join(",")],
];

/** `access-control-allow-origin` → `Access-Control-Allow-Origin`. */
const titleCase = (name: string) =>
  name.replace(/(^|-)([a-z])/g, (_m, dash: string, c: string) => dash + c.toUpperCase());

/** The CORS headers of a /v1 answer, as the document declares them. */
export const CORS_DOCS: Record<string, HeaderDoc> = Object.fromEntries(
  CORS_HEADERS.map(([name, value]) => [
    titleCase(name),
    {
      description: "CORS: any web page may read the answer (no credentials are involved).",
      schema: { type: "string", const: value },
      component: true,
    },
  ]),
);

/**
 * CORS for the public API (/v1/*): any origin may call it from a browser without credentials
 * (keys travel in `Authorization`, never in cookies, so `*` exposes nothing a server could not
 * already fetch). Preflight `OPTIONS` answers 204 with the methods and headers the API takes, and
 * the headers a client needs to read are exposed. Classify is meant for servers (a key in a web
 * page is a leaked key) but a browser preflight for it must not fail.
 *
 * Preflights are hono/cors's. Every other /v1 answer gets `CORS_HEADERS` from the envelope
 * (envelope.ts), whichever step answers it: hono/cors would set them on `c.res` before the route
 * runs, which makes Hono build an empty Response first and then copy it into the route's.
 */
export function publicCors(): MiddlewareHandler {
  const preflight = cors({
    origin: "*",
    allowMethods: ["GET", "HEAD", "POST", "OPTIONS"],
    allowHeaders: ["Authorization", "Content-Type", "Idempotency-Key"],
    exposeHeaders: EXPOSED,
    maxAge: 86_400,
  });
  return (c, next) => (c.req.method === "OPTIONS" ? preflight(c, next) : next());
}
