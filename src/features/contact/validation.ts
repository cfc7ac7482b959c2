import { z } from "zod";
import { ApiError } from "../../http/errors.js";
import { LINE_BREAK_MESSAGE } from "./schema.js";

/**
 * 400 `invalid_body` whose message names the offending field (a line break in a header-bound
 * field first, since that is the one a client most needs to see); details carry
 * z.flattenError's formErrors/fieldErrors.
 */
export function contactValidationError(error: z.ZodError): ApiError {
  const issues = error.issues.map(namingFewKeys);
  const details = z.flattenError(new z.ZodError(issues)) as unknown as Record<string, unknown>;
  const issue = issues.find((i) => i.message === LINE_BREAK_MESSAGE) ?? issues[0];
  return new ApiError("invalid_body", issue ? describe(issue) : "Request body is invalid.", { details });
}

/** Unknown fields named in an answer: a body of thousands of them gets an answer of a few lines. */
const NAMED_KEYS = 5;

const keyList = (keys: string[]): string => {
  const named = keys.slice(0, NAMED_KEYS).map((k) => `"${k}"`);
  const more = keys.length - named.length;
  return named.join(", ") + (more > 0 ? ` and ${more} more` : "");
};

/** An unknown-fields issue naming at most NAMED_KEYS of them (in its message too), any other as it is. */
function namingFewKeys(issue: z.core.$ZodIssue): z.core.$ZodIssue {
  if (issue.code !== "unrecognized_keys") return issue;
  const message = `Unrecognized key${issue.keys.length > 1 ? "s" : ""}: ${keyList(issue.keys)}`;
  return { ...issue, message };
}

function describe(issue: z.core.$ZodIssue): string {
  if (issue.code === "unrecognized_keys") {
    return `Request body has unknown field${issue.keys.length > 1 ? "s" : ""} ${keyList(issue.keys)}; allowed: name, email, subject, message.`;
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
