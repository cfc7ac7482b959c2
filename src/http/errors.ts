import type { Context } from "hono";
import { HTTPException } from "hono/http-exception";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { isConnectionFailure } from "../db/connection-failure.js";
import { type Contract, errorAnswer, NO_STORE_HEADER, retryAfterHeader } from "./contract.js";
import { noteFailure } from "./failure.js";

/** The closed set of error codes (docs/api.md "Every response" lists each with its status). */
export const ERROR_STATUS = {
  invalid_body: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  method_not_allowed: 405,
  request_timeout: 408,
  conflict: 409,
  payload_too_large: 413,
  headers_too_large: 431,
  rate_limited: 429,
  internal: 500,
  upstream_error: 502,
  unkey_unavailable: 503,
  unavailable: 503,
} as const satisfies Record<string, ContentfulStatusCode>;

export type ErrorCode = keyof typeof ERROR_STATUS;
export const ERROR_CODES = Object.keys(ERROR_STATUS) as ErrorCode[];

/**
 * The other direction, for statuses another component answered (better-auth, Node's parser):
 * the first code of that status, with the aliases a status has no code of its own for (415 and
 * 422 are bad bodies; 503 without a key store involved is `unavailable`). Unknown → `internal`.
 */
export function codeForStatus(status: number): ErrorCode {
  if (status === 415 || status === 422) return "invalid_body";
  if (status === 503) return "unavailable";
  return ERROR_CODES.find((code) => ERROR_STATUS[code] === status) ?? "internal";
}

export interface ApiErrorOptions {
  reason?: string;
  details?: Record<string, unknown>;
  /** Extra response headers, e.g. Retry-After or Allow. */
  headers?: Record<string, string>;
  cause?: unknown;
}

/**
 * An expected failure, rendered by the one error renderer. Route handlers and the HTTP-facing
 * steps they call (a feature's `route.ts`, `handler.ts`, `send.ts`) throw it; domain code and
 * ports return their failures as values (`src/lib/result.ts`) for those steps to map.
 */
export class ApiError extends Error {
  readonly status: ContentfulStatusCode;
  readonly reason?: string;
  readonly details?: Record<string, unknown>;
  readonly headers?: Record<string, string>;

  constructor(
    readonly code: ErrorCode,
    message: string,
    opts: ApiErrorOptions = {},
  ) {
    super(message, { cause: opts.cause });
    this.name = "ApiError";
    this.status = ERROR_STATUS[code];
    this.reason = opts.reason;
    this.details = opts.details;
    this.headers = opts.headers;
  }
}

export interface ErrorBody {
  error: {
    code: ErrorCode;
    message: string;
    reason?: string;
    details?: Record<string, unknown>;
    request_id: string;
  };
}

export function errorBody(err: ApiError, requestId: string): ErrorBody {
  return {
    error: {
      code: err.code,
      message: err.message,
      ...(err.reason !== undefined && { reason: err.reason }),
      ...(err.details !== undefined && { details: err.details }),
      request_id: requestId,
    },
  };
}

/** Maps anything thrown to an ApiError; unknown errors become a bare 500 `internal`. */
export function toApiError(err: unknown): ApiError {
  if (err instanceof ApiError) return err;
  if (err instanceof HTTPException) {
    if (err.status === 413) return new ApiError("payload_too_large", "Request body is too large.");
    if (err.status === 400) return new ApiError("invalid_body", "Request body must be valid JSON.");
    // @hono/zod-openapi answers a required JSON body sent with another Content-Type with 415.
    if (err.status === 415) {
      return new ApiError("invalid_body", "Request body must be JSON (send Content-Type: application/json).");
    }
  }
  if (isConnectionFailure(err)) {
    return new ApiError("unavailable", "A backing service is temporarily unavailable; retry shortly.", {
      cause: err,
      headers: { "Retry-After": "2" },
    });
  }
  return new ApiError("internal", "Internal error.", { cause: err });
}

/**
 * What the one renderer adds to every operation's document: the 500 and `default` any route can
 * give, `WWW-Authenticate` on every 401, `Retry-After` on a 503 (a backing service down) and
 * `Cache-Control: no-store` on every error.
 */
export const RENDERED_ERRORS: Contract = {
  fallbacks: {
    "500": errorAnswer("Internal error: the message is generic, the request id names it.", {
      internal: { code: "internal", message: "Internal error." },
    }),
    // Any status a proxy or a future version adds still has the one error shape.
    default: errorAnswer("Any other error, in the same shape."),
  },
  stamps: [
    {
      on: (status) => status === "401",
      headers: {
        "WWW-Authenticate": {
          description:
            'RFC 6750: `Bearer` when no usable key was sent, `Bearer error="invalid_token"` when the key was rejected.',
          required: true,
          schema: { type: "string", maxLength: 128, pattern: "^Bearer" },
          component: true,
        },
      },
    },
    { on: (status) => status === "503", headers: { "Retry-After": { ...retryAfterHeader(), component: true } } },
    { on: (status) => status === "default" || /^[45]/.test(status), headers: { "Cache-Control": NO_STORE_HEADER } },
  ],
};

/** The one error renderer. */
export function renderError(c: Context, err: ApiError): Response {
  noteFailure(c, err.code, err.status, err.cause ?? err.message);
  const requestId = (c.get("requestId") as string | undefined) ?? "unknown";
  const res = c.json(errorBody(err, requestId), err.status);
  // RFC 6750 §3: every 401 names the scheme; a key that was sent and refused is an invalid token.
  if (err.status === 401) {
    res.headers.set("WWW-Authenticate", err.reason === "INVALID" ? 'Bearer error="invalid_token"' : "Bearer");
  }
  res.headers.set("Cache-Control", "no-store");
  for (const [k, v] of Object.entries(err.headers ?? {})) res.headers.set(k, v);
  // The refused body may be partly unread: do not reuse the connection.
  if (err.code === "payload_too_large") res.headers.set("Connection", "close");
  return res;
}
