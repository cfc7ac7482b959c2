import { IncomingMessage } from "node:http";
import type { MiddlewareHandler } from "hono";
import { bodyLimit as honoBodyLimit } from "hono/body-limit";
import { type Contract, type Documented, documented, errorAnswer } from "./contract.js";
import { ApiError } from "./errors.js";
import type { AppEnv } from "./types.js";

export const BODILESS = new Set(["GET", "HEAD", "OPTIONS"]);

/** The one 413 every body limit answers. */
export const tooLarge = (maxBytes: number) =>
  new ApiError("payload_too_large", `Request body is larger than ${maxBytes} bytes.`);

/** The 413 as the document declares it, wherever a body is read. */
export const tooLargeAnswer = (maxBytes: number) =>
  errorAnswer("The request body is larger than the limit.", {
    too_large: { code: "payload_too_large", message: tooLarge(maxBytes).message },
  });

/**
 * 413 `payload_too_large` for bodies over `maxBytes`, whether announced by Content-Length
 * (refused before reading) or streamed chunked (refused as soon as the count passes the limit).
 * GET/HEAD/OPTIONS skip it: touching their body would make @hono/node-server build a full
 * Request object on the hot path for nothing. So do the `selfCapped` paths when the request came
 * over node:http: their handlers read the socket with the same cap (json-body.ts), which spares
 * them that Request too.
 */
export function bodyLimit(maxBytes: number, selfCapped: readonly string[] = []): Documented<MiddlewareHandler<AppEnv>> {
  const limit = honoBodyLimit({
    maxSize: maxBytes,
    onError: () => {
      throw tooLarge(maxBytes);
    },
  });
  const own = new Set(selfCapped);
  const contract: Contract = {
    applies: (op) => !BODILESS.has(op.method),
    // Announced by Content-Length: refused here; streamed: refused where the route reads it.
    answers: { "413": tooLargeAnswer(maxBytes) },
    within: { "413": tooLargeAnswer(maxBytes) },
  };
  return documented((c, next) => {
    if (BODILESS.has(c.req.method)) return next();
    if (own.has(c.req.path) && c.env?.incoming instanceof IncomingMessage) {
      c.set("bodyOnSocket", c.env.incoming);
      return next();
    }
    return limit(c, next);
  }, contract);
}
