import type { components } from "./generated/openapi.js";
import { parseRateLimit, parseRetryAfter, type RateLimit } from "./headers.js";

/** The body of every error answer. */
export type ErrorBody = components["schemas"]["ErrorResponse"];
/** Every `error.code` the API can answer. */
export type ErrorCode = ErrorBody["error"]["code"];
/**
 * Failures with no answer (`status` 0): the connection failed (`network_error`), an attempt ran
 * past `timeoutMs` (`timeout`), or the caller's `AbortSignal` fired (`aborted`).
 */
export type ClientErrorCode = "network_error" | "timeout" | "aborted";

/** An error answer of the API, or a call that got no answer (`status` 0, a ClientErrorCode). */
export class AlmanacError<C extends ErrorCode | ClientErrorCode = ErrorCode | ClientErrorCode> extends Error {
  override readonly name = "AlmanacError";
  constructor(
    readonly status: number,
    readonly code: C,
    message: string,
    readonly requestId: string | null,
    readonly reason: string | undefined,
    readonly details: Record<string, unknown> | undefined,
    /** Seconds, from `Retry-After` (429 and 503). */
    readonly retryAfter: number | null,
    readonly rateLimit: RateLimit | null,
    readonly response: Response | null,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** `e` is an AlmanacError, with this `code` when one is given. */
export function isAlmanacError<C extends ErrorCode | ClientErrorCode>(e: unknown, code?: C): e is AlmanacError<C> {
  return e instanceof AlmanacError && (code === undefined || e.code === code);
}

/** The AlmanacError of an error answer (its JSON body already read, when it had one). */
export function errorOf(res: Response, body: unknown): AlmanacError<ErrorCode> {
  const e = (body as Partial<ErrorBody> | undefined)?.error;
  return new AlmanacError(
    res.status,
    (e?.code ?? "internal") as ErrorCode,
    e?.message ?? `HTTP ${res.status}`,
    e?.request_id ?? res.headers.get("x-request-id"),
    e?.reason,
    e?.details,
    parseRetryAfter(res.headers.get("retry-after")),
    parseRateLimit(res.headers.get("ratelimit")),
    res,
  );
}

/** A call that got no answer. */
export function noAnswer(code: ClientErrorCode, message: string, cause?: unknown): AlmanacError<ClientErrorCode> {
  return new AlmanacError(0, code, message, null, undefined, undefined, null, null, null, { cause });
}
