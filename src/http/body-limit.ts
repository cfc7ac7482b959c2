import type { MiddlewareHandler } from "hono";
import { bodyLimit as honoBodyLimit } from "hono/body-limit";
import { ApiError } from "./errors.js";

const BODILESS = new Set(["GET", "HEAD", "OPTIONS"]);

/**
 * 413 `payload_too_large` for bodies over `maxBytes`, whether announced by Content-Length
 * (refused before reading) or streamed chunked (refused as soon as the count passes the limit).
 * GET/HEAD/OPTIONS skip it: touching their body would make @hono/node-server build a full
 * Request object on the hot path for nothing.
 */
export function bodyLimit(maxBytes: number): MiddlewareHandler {
  const limit = honoBodyLimit({
    maxSize: maxBytes,
    onError: () => {
      throw new ApiError("payload_too_large", `Request body is larger than ${maxBytes} bytes.`);
    },
  });
  return (c, next) => (BODILESS.has(c.req.method) ? next() : limit(c, next));
}
