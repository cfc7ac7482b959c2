import type { Context } from "hono";
import getRawBody from "raw-body";
import { tooLarge, tooLargeAnswer } from "./body-limit.js";
import { type Contract, errorAnswer } from "./contract.js";
import { ApiError } from "./errors.js";
import { refuseNul } from "./no-nul.js";
import type { AppEnv } from "./types.js";

export const BODY_MUST_BE_JSON = "Request body must be JSON.";

/** What a handler reading its body with `readJsonBody` answers for it (NULs: no-nul.ts). */
export const jsonBodyContract = (maxBytes: number): Contract => ({
  answers: {
    "400": errorAnswer("The body is not JSON.", { not_json: { code: "invalid_body", message: BODY_MUST_BE_JSON } }),
    "413": tooLargeAnswer(maxBytes),
  },
});

/**
 * Reads the request body as JSON: missing, empty or unparsable →
 * 400 `invalid_body` saying the body must be JSON; over `maxBytes` → 413 `payload_too_large`
 * (announced by Content-Length: before reading; chunked: as soon as the count passes it).
 *
 * On a self-capped route (app.ts's bodyLimit) that came over node:http, the body is read straight
 * off the socket (raw-body), so no web Request is built for it — that costs more than the
 * JSON.parse. Otherwise (app.request in tests) through the Request, capped by bodyLimit.
 */
export async function readJsonBody(c: Context<AppEnv>, maxBytes: number): Promise<unknown> {
  let text: string;
  try {
    const incoming = c.get("bodyOnSocket");
    text = incoming
      ? await getRawBody(incoming, { limit: maxBytes, length: incoming.headers["content-length"], encoding: "utf8" })
      : await c.req.text();
  } catch (err) {
    if (err instanceof ApiError) throw err; // payload_too_large from the body limit
    if ((err as { type?: string }).type === "entity.too.large") throw tooLarge(maxBytes);
    throw new ApiError("invalid_body", BODY_MUST_BE_JSON);
  }
  if (text.trim() === "") throw new ApiError("invalid_body", BODY_MUST_BE_JSON);
  refuseNul(text); // what no-nul.ts checks for every other JSON body
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new ApiError("invalid_body", BODY_MUST_BE_JSON);
  }
}
