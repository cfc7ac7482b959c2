import { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { type Contract, errorAnswer, retryAfterHeader } from "../../http/contract.js";
import { ApiError } from "../../http/errors.js";
import type { AppEnv } from "../../http/types.js";
import type { IdempotencyPrior } from "../../ports/idempotency.js";
import type { IdempotencyRefusal } from "./idempotency.js";

export const IDEMPOTENCY_MISMATCH = "Idempotency-Key was already used with a different request body.";
export const IDEMPOTENCY_IN_PROGRESS = "A request with this Idempotency-Key is still in progress; retry shortly.";
export const REQUEST_CUT = "The request was cut before its answer and nothing was kept; retry it.";

/** The 400 `invalid_body` message for an `Idempotency-Key` header that is not one (every route alike). */
export const IDEMPOTENCY_KEY_INVALID = "Idempotency-Key must be 1 to 255 visible ASCII characters.";

/** An `Idempotency-Key`: 1 to 255 visible ASCII characters. */
export const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,255}$/;

/** The `Idempotency-Key` request header as a route declares (and may validate) it. */
export const idempotencyKeyHeader = (description: string, example: string) =>
  z
    .string()
    .min(1)
    .max(255)
    .regex(/^[\x21-\x7e]+$/, "must be 1 to 255 printable ASCII characters without spaces")
    .optional()
    .openapi({ description, example });

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

/** What a route answering through `claimOrWait` / `answerPrior` / `holding` adds to its document. */
export const IDEMPOTENCY_CONTRACT: Contract = {
  stamps: [
    {
      on: (status) => status === "200",
      headers: {
        "Idempotent-Replayed": {
          description: "`true` when this is the stored answer to an earlier request with the same Idempotency-Key.",
          schema: { type: "string", enum: ["true"], example: "true" },
        },
      },
    },
  ],
  answers: {
    "409": errorAnswer(
      "The `Idempotency-Key` was used with another body, or its first request is still running (then `Retry-After`).",
      {
        mismatch: { code: "conflict", message: IDEMPOTENCY_MISMATCH },
        in_progress: { code: "conflict", message: IDEMPOTENCY_IN_PROGRESS },
      },
      { "Retry-After": retryAfterHeader() },
    ),
    "503": errorAnswer(
      "The request was cut (the client went away, or the server's shutdown deadline) before its answer; nothing was kept.",
      { cut: { code: "unavailable", message: REQUEST_CUT } },
      { "Retry-After": retryAfterHeader() },
    ),
  },
};
