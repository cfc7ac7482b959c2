import type { Context } from "hono";
import { ApiError } from "./errors.js";

export const BODY_MUST_BE_JSON = "Request body must be JSON.";

/**
 * Reads the request body as JSON (spec §4 classify rule 2): missing, empty or unparsable →
 * 400 `invalid_body` saying the body must be JSON. Size is already bounded by bodyLimit.
 */
export async function readJsonBody(c: Context): Promise<unknown> {
  let text: string;
  try {
    text = await c.req.text();
  } catch (err) {
    if (err instanceof ApiError) throw err; // payload_too_large from the body limit
    throw new ApiError("invalid_body", BODY_MUST_BE_JSON);
  }
  if (text.trim() === "") throw new ApiError("invalid_body", BODY_MUST_BE_JSON);
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new ApiError("invalid_body", BODY_MUST_BE_JSON);
  }
}
