import type { Context } from "hono";
import { z } from "zod";
import { type Contract, errorAnswer } from "./contract.js";
import { ApiError } from "./errors.js";

type Target = "query" | "json" | "param" | "header" | "form" | "cookie";

/**
 * Turns a failed request schema into 400 `invalid_body`. For query parameters the message
 * names the first offending parameter (e.g. `query parameter "code" is required`); details always carry z.flattenError's formErrors/fieldErrors.
 */
export function validationError(error: z.ZodError, target: Target | string, c: Context): ApiError {
  const details = z.flattenError(error) as unknown as Record<string, unknown>;
  const first = error.issues[0];
  if (target === "query" && first) {
    const name = String(first.path[0] ?? "");
    const given = name ? c.req.query(name) : undefined;
    const message =
      given === undefined
        ? `query parameter "${name}" is required`
        : `query parameter "${name}" is invalid: ${first.message}`;
    return new ApiError("invalid_body", message, { details });
  }
  if (target === "json") return new ApiError("invalid_body", "Request body is invalid.", { details });
  return new ApiError("invalid_body", `Invalid ${target}: ${first?.message ?? "invalid input"}`, { details });
}

/** The 400 of a route whose parameters or body are checked (its own 400, with examples, comes first). */
export const VALIDATION_CONTRACT: Contract = {
  applies: (op) => op.takesInput,
  fallbacks: { "400": errorAnswer("A parameter or the body is invalid; the message names it.") },
};
