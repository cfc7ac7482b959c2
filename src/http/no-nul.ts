import type { Context, MiddlewareHandler, Next } from "hono";
import { BODILESS } from "./body-limit.js";
import { type Contract, type Documented, documented, errorAnswer } from "./contract.js";
import { ApiError } from "./errors.js";
import type { AppEnv } from "./types.js";

const JSON_TYPE = /^application\/(?:[\w.+-]*\+)?json\b/i;
// U+0000 in JSON text: a raw NUL byte (never valid JSON), or a `\u0000` escape, i.e. one
// preceded by an even number of backslashes (`\\u0000` is a backslash and the text "u0000").
const NUL = /\0|(?:^|[^\\])(?:\\\\)*\\u0000/;

/** The one refusal of U+0000 in a JSON body (PostgreSQL text cannot hold it). */
export const nulRefused = () =>
  new ApiError("invalid_body", "Request body must not contain the NUL character (U+0000).");

/** A JSON body is refused for a NUL wherever one is read (here, or by json-body.ts). */
export const NUL_CONTRACT: Contract = {
  applies: (op) => !BODILESS.has(op.method),
  answers: {
    "400": errorAnswer("The JSON body holds U+0000.", { nul: { code: "invalid_body", message: nulRefused().message } }),
  },
};

/** Throws `nulRefused()` when the JSON text (or its bytes, read as latin1) holds U+0000. */
export function refuseNul(jsonText: string): void {
  if (NUL.test(jsonText)) throw nulRefused();
}

/**
 * Refuses U+0000 anywhere in a JSON request body with 400 `invalid_body`, once, at the edge, for
 * every route: PostgreSQL cannot store it in text (it answered 500) and no field of the API means
 * it. Reads a copy of the body (`clone()`), so whatever reads it next gets it untouched. The
 * routes that read their body off the socket (bodyLimit's `selfCapped`) check it as they parse
 * (json-body.ts).
 */
export function noNulInJson(): Documented<MiddlewareHandler<AppEnv>> {
  // Not async where there is nothing to read: every GET passes here.
  return documented<MiddlewareHandler<AppEnv>>((c, next) => {
    if (BODILESS.has(c.req.method) || c.get("bodyOnSocket") || !JSON_TYPE.test(c.req.header("content-type") ?? ""))
      return next();
    return checkBody(c, next);
  }, NUL_CONTRACT);
}

async function checkBody(c: Context<AppEnv>, next: Next): Promise<void> {
  let bytes: ArrayBuffer;
  try {
    bytes = await c.req.raw.clone().arrayBuffer();
  } catch {
    return next(); // unreadable (too large, cut): the reader downstream answers that
  }
  refuseNul(Buffer.from(bytes).toString("latin1"));
  return next();
}
