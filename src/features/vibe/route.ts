import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import { MISSING_KEY_MESSAGE, REJECTED_KEY_MESSAGE } from "../../http/key-auth.js";
import type { AppEnv } from "../../http/types.js";
import { errorResponse, type HeaderDocs } from "../shared/responses.js";
import { classifyHandler, type VibeDeps } from "./handler.js";
import { CLASSIFY_EXAMPLE, ClassifyRequest, ClassifyResponse } from "./schema.js";

const retryAfter = { description: "Seconds to wait before retrying.", schema: { type: "integer" as const } };

/** The key's rate limit as this call spent it: on every answer after the key was verified, when it has one. */
const keyRateLimit: HeaderDocs = {
  "RateLimit-Policy": {
    description:
      "The key's rate limit (`key`), or its account's (`account`) when that one binds first: " +
      '`"account";q=10;w=60` is 10 calls per 60 s. Sent when the key or its account has a rate limit.',
    schema: { type: "string", maxLength: 128, example: '"account";q=10;w=60' },
  },
  RateLimit: {
    description: "Calls left in that window (`r`) and seconds until it resets (`t`).",
    schema: { type: "string", maxLength: 128, example: '"account";r=9;t=60' },
  },
};

const route = createRoute({
  method: "post",
  path: "/v1/vibe/classify",
  tags: ["Vibe"],
  summary: "Classify the sentiment of texts (API key required)",
  description:
    "Labels each text `positive`, `neutral` or `negative` with calibrated scores summing to 1, in input order. " +
    "The key is verified on every call, before the body is looked at; a call that runs spends one use of the key, " +
    "given back if it fails (502). Send an `Idempotency-Key` to retry safely: the same key and body within 24 h " +
    "runs once and is charged once, also when sent concurrently; a copy gets the first answer with " +
    "`Idempotent-Replayed: true` and spends no use (or a 409 with `Retry-After` if the first is still running " +
    "after a few seconds); the same key with another body is a 409.",
  security: [{ bearer: [] }],
  request: {
    headers: z.object({
      "idempotency-key": z
        .string()
        .optional()
        .openapi({ description: "1–255 visible ASCII characters; makes a retry safe for 24 h.", example: "b7e1c2" }),
    }),
    body: { required: true, content: { "application/json": { schema: ClassifyRequest } } },
  },
  responses: {
    200: {
      description: "One result per text, in input order.",
      headers: {
        "Idempotent-Replayed": {
          description: "`true` when this is a stored answer.",
          schema: { type: "string", enum: ["true"] },
        },
        ...keyRateLimit,
      },
      content: { "application/json": { schema: ClassifyResponse, example: CLASSIFY_EXAMPLE } },
    },
    400: errorResponse(
      "The body is not JSON, or not 1–20 non-empty strings of at most 5,000 characters.",
      {
        notJson: { code: "invalid_body", message: "Request body must be JSON." },
        tooMany: {
          code: "invalid_body",
          message: "Request body is invalid: send 1 to 20 non-empty strings, each at most 5,000 characters.",
          details: { formErrors: [], fieldErrors: { texts: ["send at most 20 texts"] } },
        },
      },
      keyRateLimit,
    ),
    401: errorResponse("No key, a malformed `Authorization` header, or a rejected key.", {
      missing: { code: "unauthorized", message: MISSING_KEY_MESSAGE },
      rejected: { code: "unauthorized", message: REJECTED_KEY_MESSAGE, reason: "INVALID" },
    }),
    403: errorResponse("The key lacks the permission for this route.", {
      forbidden: { code: "forbidden", message: 'API key lacks the permission "vibe.classify".' },
    }),
    409: errorResponse(
      "The `Idempotency-Key` was used with another body, or its first request is still running.",
      {
        conflict: { code: "conflict", message: "Idempotency-Key was already used with a different request body." },
      },
      keyRateLimit,
    ),
    429: errorResponse(
      "The key's rate limit or its uses are exhausted.",
      {
        rateLimited: {
          code: "rate_limited",
          message: "API key rate limit reached; retry later.",
          reason: "RATE_LIMITED",
        },
        usageExceeded: { code: "rate_limited", message: "API key has no remaining uses.", reason: "USAGE_EXCEEDED" },
      },
      { "Retry-After": retryAfter, ...keyRateLimit },
    ),
    502: errorResponse(
      "The classification provider failed.",
      {
        upstream: { code: "upstream_error", message: "The classification provider failed; retry later." },
      },
      keyRateLimit,
    ),
    503: errorResponse(
      "Key verification is temporarily down.",
      {
        unavailable: {
          code: "unkey_unavailable",
          message: "Key verification is temporarily unavailable; retry shortly.",
        },
      },
      { "Retry-After": retryAfter },
    ),
  },
});

/** `POST /v1/vibe/classify`. Documented from `route`; the body is read by hand, after authentication. */
export function registerVibe(app: OpenAPIHono<AppEnv>, deps: VibeDeps): void {
  app.openAPIRegistry.registerComponent("securitySchemes", "bearer", {
    type: "http",
    scheme: "bearer",
    description: "An API key (`alm_…`): `Authorization: Bearer <key>`, exactly one space.",
  });
  app.openAPIRegistry.registerPath(route);
  app.post(route.path, (c) => classifyHandler(c, deps));
}
