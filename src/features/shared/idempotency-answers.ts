import type { Context } from "hono";
import { ApiError } from "../../http/errors.js";
import type { AppEnv } from "../../http/types.js";
import type { IdempotencyPrior } from "../../ports/idempotency.js";
import type { IdempotencyRefusal } from "./idempotency.js";

export const IDEMPOTENCY_MISMATCH = "Idempotency-Key was already used with a different request body.";
export const IDEMPOTENCY_IN_PROGRESS = "A request with this Idempotency-Key is still in progress; retry shortly.";
export const REQUEST_CUT = "The request was cut before its answer and nothing was kept; retry it.";

/** The HTTP answer to an idempotency refusal: 409 for the key's conflicts, 503 for a cut request. */
export function idempotencyRefusalError(refusal: IdempotencyRefusal): ApiError {
  switch (refusal.kind) {
    case "mismatch":
      return new ApiError("conflict", IDEMPOTENCY_MISMATCH);
    case "in_progress":
      return new ApiError("conflict", IDEMPOTENCY_IN_PROGRESS, { headers: { "Retry-After": "1" } });
    case "cut":
      return new ApiError("unavailable", REQUEST_CUT, { headers: { "Retry-After": "1" } });
  }
}

/** The answer to a request whose key another request holds or held: its stored answer, or a 409. */
export function answerPrior(c: Context<AppEnv>, prior: IdempotencyPrior): Response {
  if (prior.kind !== "replay") throw idempotencyRefusalError(prior);
  return c.body(prior.body, prior.status as 200, {
    "Content-Type": "application/json",
    "Idempotent-Replayed": "true",
  });
}
