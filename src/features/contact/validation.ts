import { z } from "zod";
import { ApiError } from "../../http/errors.js";
import { LINE_BREAK_MESSAGE } from "./schema.js";

/**
 * 400 `invalid_body` whose message names the offending field (a line break in a header-bound
 * field first, since that is the one a client most needs to see); details carry
 * z.flattenError's formErrors/fieldErrors.
 */
export function contactValidationError(error: z.ZodError): ApiError {
  const details = z.flattenError(error) as unknown as Record<string, unknown>;
  const issue = error.issues.find((i) => i.message === LINE_BREAK_MESSAGE) ?? error.issues[0];
  return new ApiError("invalid_body", issue ? describe(issue) : "Request body is invalid.", { details });
}

function describe(issue: z.core.$ZodIssue): string {
  if (issue.code === "unrecognized_keys") {
    const keys = issue.keys.map((k) => `"${k}"`).join(", ");
    return `Request body has unknown field${issue.keys.length > 1 ? "s" : ""} ${keys}; allowed: name, email, subject, message.`;
  }
  const field = issue.path.length ? String(issue.path[0]) : undefined;
  if (!field) return `Request body must be a JSON object {name, email, subject?, message}: ${issue.message}.`;
  if (issue.code === "invalid_type" && issue.message.endsWith("received undefined"))
    return `Field "${field}" is required.`;
  return `Field "${field}" ${fieldMessage(issue)}.`;
}

function fieldMessage(issue: z.core.$ZodIssue): string {
  if (issue.code === "too_big") return `must be at most ${issue.maximum} characters`;
  if (issue.code === "too_small") return `must be at least ${issue.minimum} character${issue.minimum === 1 ? "" : "s"}`;
  if (issue.code === "invalid_format" && issue.format === "email") return "must be a valid e-mail address";
  if (issue.code === "invalid_type") return `must be a ${issue.expected}`;
  return issue.message;
}
