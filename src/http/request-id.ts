import { randomUUID } from "node:crypto";
import type { Context, MiddlewareHandler } from "hono";

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
    setResponseHeader(c, "X-Request-Id", id);
  };
}

/** Sets a header on the response leaving the app, copying it first when its headers are immutable. */
export function setResponseHeader(c: Context, name: string, value: string): void {
  try {
    c.res.headers.set(name, value);
  } catch {
    // Headers of a fetched Response (e.g. better-auth's) are immutable: copy it once.
    c.res = new Response(c.res.body, c.res);
    c.res.headers.set(name, value);
  }
}
