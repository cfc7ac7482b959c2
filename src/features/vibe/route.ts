import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { documented } from "../../http/contract.js";
import { jsonBodyContract } from "../../http/json-body.js";
import { keyAuthContract } from "../../http/key-auth.js";
import type { AppEnv } from "../../http/types.js";
import { IDEMPOTENCY_CONTRACT, idempotencyKeyHeader } from "../shared/idempotency-answers.js";
import { errorResponse } from "../shared/responses.js";
import { classifyHandler, type VibeDeps } from "./handler.js";
import { CLASSIFY_EXAMPLE, ClassifyRequest, ClassifyResponse, IncludeQuery } from "./schema.js";

const route = createRoute({
  method: "post",
  path: "/v1/vibe/classify",
  tags: ["Vibe"],
  summary: "Classify the sentiment of texts (API key required)",
  description:
    "Labels each text `positive`, `neutral` or `negative` with calibrated scores summing to 1, in input order. " +
    "The key is verified on every call, before the body is looked at; a call that runs spends one use of the key, " +
    "given back if it fails (502) or the client goes away before its answer. Send an `Idempotency-Key` to retry " +
    "safely: the same key and body within 24 h runs once and is charged once, also when sent concurrently; a " +
    "copy gets the first answer with `Idempotent-Replayed: true` and spends no use (or a 409 with `Retry-After` " +
    "if the first is still running after a few seconds); the same key with another body is a 409. " +
    "`?include=emotions,sentences` adds each text's emotions and its sentences, each classified, with `mixed`.",
  request: {
    query: z.object({ include: IncludeQuery }),
    headers: z.object({
      "idempotency-key": idempotencyKeyHeader("1–255 visible ASCII characters; makes a retry safe for 24 h.", "b7e1c2"),
    }),
    body: { required: true, content: { "application/json": { schema: ClassifyRequest } } },
  },
  responses: {
    200: {
      description: "One result per text, in input order.",
      content: { "application/json": { schema: ClassifyResponse, example: CLASSIFY_EXAMPLE } },
    },
    400: errorResponse(
      "The body is not JSON, or not 1–20 non-empty strings of at most 5,000 characters, or `include` names something else than emotions and sentences.",
      {
        tooMany: {
          code: "invalid_body",
          message: "Request body is invalid: send 1 to 20 non-empty strings, each at most 5,000 characters.",
          details: { formErrors: [], fieldErrors: { texts: ["send at most 20 texts"] } },
        },
      },
    ),
    502: errorResponse("The classification provider failed.", {
      upstream: { code: "upstream_error", message: "The classification provider failed; retry later." },
    }),
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
  // What the handler uses, from the inside out: the body is read, the Idempotency-Key claimed,
  // and every answer after the key's verification (body errors included) carries its RateLimit.
  const uses = [
    jsonBodyContract(deps.config.BODY_LIMIT_BYTES),
    IDEMPOTENCY_CONTRACT,
    keyAuthContract({ permission: deps.config.KEY_PERMISSION, charged: true }),
  ];
  app.post(
    route.path,
    documented((c: Context<AppEnv>) => classifyHandler(c, deps), uses),
  );
}
