import { randomUUID } from "node:crypto";
import type { MiddlewareHandler } from "hono";

/**
 * Generates a request id (never taken from the client) and stamps it on whatever response
 * leaves the app — including raw Responses returned by mounted handlers, which Hono's own
 * requestId() middleware does not reach.
 */
export function requestId(): MiddlewareHandler {
  return async (c, next) => {
    const id = randomUUID();
    c.set("requestId", id);
    await next();
    try {
      c.res.headers.set("X-Request-Id", id);
    } catch {
      // Headers of a fetched Response are immutable: copy it once.
      c.res = new Response(c.res.body, c.res);
      c.res.headers.set("X-Request-Id", id);
    }
  };
}
