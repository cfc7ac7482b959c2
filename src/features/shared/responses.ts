import { z } from "@hono/zod-openapi";
import { ERROR_CODES } from "../../http/errors.js";

/** OpenAPI pieces every route shares: the one error shape, error examples, the demo-tier headers. */

export const ErrorSchema = z
  .object({
    error: z.object({
      code: z.enum(ERROR_CODES as [string, ...string[]]),
      message: z.string(),
      reason: z.string().optional(),
      details: z.record(z.string(), z.unknown()).optional(),
      request_id: z.string(),
    }),
  })
  .openapi("ErrorResponse");

interface ErrorExample {
  code: string;
  message: string;
  reason?: string;
  details?: Record<string, unknown>;
}

export type HeaderDocs = Record<
  string,
  {
    description: string;
    schema: {
      type: "string" | "integer";
      maxLength?: number;
      minimum?: number;
      maximum?: number;
      example?: unknown;
    };
  }
>;

/**
 * Node's limit on a request's headers taken together (http.maxHeaderSize, 16 KiB): no one header
 * can be longer, and a request over it is answered 431 before any route.
 */
export const HEADERS_MAX = 16_384;

const EXAMPLE_REQUEST_ID = "3f1c9a2e-5b7d-4e8a-9c61-0d2f4b8a7e15";

export const demoTierHeaders: HeaderDocs = {
  "RateLimit-Policy": {
    description: 'Demo-tier policy: `"demo";q=60;w=3600` (60 calls per 3600 s per client IP).',
    schema: { type: "string", maxLength: 128, example: '"demo";q=60;w=3600' },
  },
  RateLimit: {
    description: "Calls left (`r`) and seconds until the window resets (`t`).",
    schema: { type: "string", maxLength: 128, example: '"demo";r=59;t=3600' },
  },
};

/** An error response with one named example per case. */
export function errorResponse(description: string, examples: Record<string, ErrorExample>, headers?: HeaderDocs) {
  return {
    description,
    ...(headers && { headers }),
    content: {
      "application/json": {
        schema: ErrorSchema,
        examples: Object.fromEntries(
          Object.entries(examples).map(([name, e]) => [
            name,
            { value: { error: { ...e, request_id: EXAMPLE_REQUEST_ID } } },
          ]),
        ),
      },
    },
  };
}

/** 401 (a key was sent and rejected) and 429 (demo tier), shared by every public GET. */
export const demoTierErrorResponses = {
  401: errorResponse("An `Authorization` header was sent and the key was rejected (no header: demo tier).", {
    malformed: {
      code: "unauthorized",
      message: "Missing or malformed Authorization header: send `Authorization: Bearer <token>` with a valid API key.",
    },
    rejected: { code: "unauthorized", message: "API key was rejected.", reason: "INVALID" },
  }),
  429: errorResponse(
    "Demo-tier limit reached (60 calls per hour per client IP across all /v1 GET routes).",
    {
      demo: {
        code: "rate_limited",
        message: "Demo tier limit of 60 calls per hour reached; retry later or send an API key.",
        reason: "DEMO_HOURLY_LIMIT",
      },
    },
    {
      ...demoTierHeaders,
      "Retry-After": {
        description: "Seconds until the window resets.",
        schema: { type: "integer", minimum: 1, maximum: 86_400, example: 1800 },
      },
    },
  ),
} as const;
