/**
 * @almanac/client: the Almanac API's types (generated from its OpenAPI document by
 * openapi-typescript, see scripts/generate.ts) behind openapi-fetch, with a thin layer that
 *
 * - sends the API key as `Authorization: Bearer …`,
 * - adds an `Idempotency-Key` to every POST (kept across retries, so a retry is never charged twice),
 * - retries 429 and 503 after their `Retry-After`, a bounded number of times and never for
 *   longer than `maxRetryDelayMs` at once,
 * - throws an `AlmanacError` whose `code` is one of the document's `error.code` values,
 * - returns each answer with its `X-Request-Id` and parsed `RateLimit` header.
 */
import createClient, { type Client, type FetchResponse, type MaybeOptionalInit, type Middleware } from "openapi-fetch";
import type { components, paths } from "./generated/openapi.js";

export type { components, operations, paths } from "./generated/openapi.js";

export type Schemas = components["schemas"];
/** The body of every error answer. */
export type ErrorBody = Schemas["ErrorResponse"];
/** Every `error.code` the API can answer. */
export type ErrorCode = ErrorBody["error"]["code"];

/** The demo tier's and a key's `RateLimit` header (IETF draft): `"demo";r=59;t=3600`. */
export interface RateLimit {
  /** The policy's name, e.g. `demo`. */
  policy: string;
  /** Calls left in the window. */
  remaining: number;
  /** Seconds until the window resets. */
  resetSeconds: number;
}

export interface ClientOptions {
  /** The API's origin, e.g. `https://almanac.example`. */
  baseUrl: string;
  /** An API key (`alm_…`); without one, lookups run on the demo tier. */
  apiKey?: string;
  /** Retries of a 429 or 503 answer (default 2). */
  maxRetries?: number;
  /** A `Retry-After` longer than this (ms) is not waited for: the error is thrown (default 10 s). */
  maxRetryDelayMs?: number;
  /** Makes the `Idempotency-Key` of a POST that does not set one (default `crypto.randomUUID`). */
  idempotencyKey?: () => string;
  /** The fetch to use (default `globalThis.fetch`). */
  fetch?: (request: Request) => Promise<Response>;
}

/** A successful answer: the typed body and what the headers say about the call. */
export interface Answer<T> {
  data: T;
  status: number;
  /** The server's id of this call (quote it to support). */
  requestId: string | null;
  rateLimit: RateLimit | null;
  response: Response;
}

/** An error answer of the API (or a network failure: `status` 0, `code` `network_error`). */
export class AlmanacError<C extends ErrorCode | "network_error" = ErrorCode | "network_error"> extends Error {
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
  ) {
    super(message);
  }
}

/** `e` is an AlmanacError, with this `code` when one is given. */
export function isAlmanacError<C extends ErrorCode | "network_error">(e: unknown, code?: C): e is AlmanacError<C> {
  return e instanceof AlmanacError && (code === undefined || e.code === code);
}

/** Parses `"demo";r=59;t=3600` (the first item when several are listed). */
export function parseRateLimit(header: string | null): RateLimit | null {
  const m = header?.match(/^\s*"?([^";,]+)"?\s*;(?=.*\br=(\d+))(?=.*\bt=(\d+))/);
  if (!m) return null;
  return { policy: m[1] as string, remaining: Number(m[2]), resetSeconds: Number(m[3]) };
}

/** `Retry-After` in seconds: delta-seconds or an HTTP date; null when absent or unreadable. */
export function parseRetryAfter(header: string | null, now = Date.now()): number | null {
  if (header === null || header.trim() === "") return null;
  if (/^\s*\d+\s*$/.test(header)) return Number(header);
  const at = Date.parse(header);
  return Number.isNaN(at) ? null : Math.max(0, Math.ceil((at - now) / 1000));
}

const RETRIED = new Set([429, 503]);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** fetch that retries 429/503 after Retry-After, within the bounds; the same Request each time. */
function retryingFetch(
  base: (request: Request) => Promise<Response>,
  maxRetries: number,
  maxDelayMs: number,
): (request: Request) => Promise<Response> {
  return async (request) => {
    for (let attempt = 0; ; attempt++) {
      const last = attempt >= maxRetries;
      const res = await base(last ? request : request.clone());
      if (last || !RETRIED.has(res.status)) return res;
      const seconds = parseRetryAfter(res.headers.get("retry-after"));
      if (seconds === null || seconds * 1000 > maxDelayMs) return res;
      await res.body?.cancel();
      await sleep(seconds * 1000);
    }
  };
}

type Method = "get" | "post";
type PathsWith<M extends Method> = {
  [P in keyof paths]: paths[P] extends Record<M, infer Op> ? (Op extends undefined ? never : P) : never;
}[keyof paths];
type Init<P extends keyof paths, M extends Method> = MaybeOptionalInit<paths[P], M>;
type Rest<I> = undefined extends I ? [init?: I] : [init: I];
type DataOf<P extends keyof paths, M extends Method, I> = NonNullable<
  FetchResponse<paths[P][M] & Record<string | number, unknown>, I, "application/json">["data"]
>;

export interface AlmanacClient {
  /** Calls a GET operation: resolves with its 200 (or 304) answer, rejects with an AlmanacError. */
  get<P extends PathsWith<"get">, I extends Init<P, "get">>(
    path: P,
    ...init: Rest<I>
  ): Promise<Answer<DataOf<P, "get", I>>>;
  /** Calls a POST operation (with an Idempotency-Key): resolves with its 200 answer, rejects with an AlmanacError. */
  post<P extends PathsWith<"post">, I extends Init<P, "post">>(
    path: P,
    ...init: Rest<I>
  ): Promise<Answer<DataOf<P, "post", I>>>;
  /** The underlying openapi-fetch client (same key, idempotency and retries), for `{ data, error, response }` results. */
  readonly raw: Client<paths, "application/json">;
}

function errorOf(res: Response, body: unknown): AlmanacError {
  const e = (body as Partial<ErrorBody> | undefined)?.error;
  const requestId = res.headers.get("x-request-id");
  return new AlmanacError(
    res.status,
    (e?.code ?? "internal") as ErrorCode,
    e?.message ?? `HTTP ${res.status}`,
    e?.request_id ?? requestId,
    e?.reason,
    e?.details,
    parseRetryAfter(res.headers.get("retry-after")),
    parseRateLimit(res.headers.get("ratelimit")),
    res,
  );
}

function answerOf<T>(result: { data?: unknown; error?: unknown; response: Response }): Answer<T> {
  const res = result.response;
  if (!res.ok && res.status !== 304) throw errorOf(res, result.error);
  return {
    data: result.data as T,
    status: res.status,
    requestId: res.headers.get("x-request-id"),
    rateLimit: parseRateLimit(res.headers.get("ratelimit")),
    response: res,
  };
}

export function createAlmanacClient(options: ClientOptions): AlmanacClient {
  const base = options.fetch ?? ((request: Request) => globalThis.fetch(request));
  const newKey = options.idempotencyKey ?? (() => crypto.randomUUID());
  const raw = createClient<paths, "application/json">({
    baseUrl: options.baseUrl.replace(/\/+$/, ""),
    fetch: retryingFetch(base, options.maxRetries ?? 2, options.maxRetryDelayMs ?? 10_000),
    headers: options.apiKey ? { Authorization: `Bearer ${options.apiKey}` } : {},
  });
  const idempotency: Middleware = {
    onRequest({ request }) {
      if (request.method === "POST" && !request.headers.has("idempotency-key")) {
        request.headers.set("Idempotency-Key", newKey());
      }
      return request;
    },
  };
  raw.use(idempotency);
  const call = async <T>(run: () => Promise<{ data?: unknown; error?: unknown; response: Response }>) => {
    let result: Awaited<ReturnType<typeof run>>;
    try {
      result = await run();
    } catch (e) {
      const message = e instanceof Error ? e.message : String(e);
      throw new AlmanacError(0, "network_error", message, null, undefined, undefined, null, null, null);
    }
    return answerOf<T>(result);
  };
  // openapi-fetch's overloads are checked at the call sites of get/post; here the arguments pass through.
  const untyped = raw as unknown as Record<"GET" | "POST", (path: string, init?: unknown) => Promise<never>>;
  return {
    raw,
    get: (path, ...init) => call(() => untyped.GET(path, init[0])),
    post: (path, ...init) => call(() => untyped.POST(path, init[0])),
  };
}
