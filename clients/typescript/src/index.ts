/**
 * @almanac/client: the Almanac API's types (generated from its OpenAPI document by
 * openapi-typescript, see scripts/generate.ts) behind openapi-fetch, with a thin layer that
 *
 * - sends the API key as `Authorization: Bearer …` and a `User-Agent` naming this client,
 * - adds an `Idempotency-Key` to every POST (kept across retries, so a retry is never charged twice),
 * - bounds every attempt by `timeoutMs` and honours an `AbortSignal` at once, waits included,
 * - retries 429 and 503 after their `Retry-After`, and failed connections and timeouts of GETs
 *   and keyed POSTs after a backoff with jitter, a bounded number of times,
 * - throws an `AlmanacError` whose `code` is one of the document's `error.code` values,
 * - returns each answer with its `X-Request-Id`, parsed `RateLimit` and `Idempotent-Replayed`.
 */
import createClient, { type Client, type FetchResponse, type MaybeOptionalInit, type Middleware } from "openapi-fetch";
import { type ClassifyAllOptions, type ClassifyAllResult, classifyAll } from "./classify-all.js";
import { AlmanacError, errorOf, noAnswer } from "./errors.js";
import type { paths } from "./generated/openapi.js";
import { parseRateLimit, type RateLimit } from "./headers.js";
import { type CallLimits, retryingFetch } from "./transport.js";
import { randomUuid } from "./uuid.js";

export type { ClassifyAllOptions, ClassifyAllProgress, ClassifyAllResult } from "./classify-all.js";
export {
  AlmanacError,
  type ClientErrorCode,
  type ErrorBody,
  type ErrorCode,
  isAlmanacError,
} from "./errors.js";
export type { components, operations, paths } from "./generated/openapi.js";
export { parseRateLimit, parseRetryAfter, type RateLimit } from "./headers.js";
export { randomUuid } from "./uuid.js";

/** This client's version, sent in its `User-Agent`. */
export const VERSION = "0.1.0";
/** The default `timeoutMs`: each attempt of a call ends after 30 s. */
export const DEFAULT_TIMEOUT_MS = 30_000;

export type Schemas = import("./generated/openapi.js").components["schemas"];

export interface ClientOptions {
  /** The API's origin, e.g. `https://almanac.example`. */
  baseUrl: string;
  /** An API key (`alm_…`); without one, lookups run on the demo tier. */
  apiKey?: string;
  /** Retries of a 429 or 503 answer, a failed connection or a timeout (default 2). */
  maxRetries?: number;
  /** A `Retry-After` longer than this (ms) is not waited for: the error is thrown (default 10 s). */
  maxRetryDelayMs?: number;
  /** Each attempt ends after this many ms with a `timeout` error (default 30 s, `DEFAULT_TIMEOUT_MS`). */
  timeoutMs?: number;
  /** Makes the `Idempotency-Key` of a POST that does not set one (default: a random UUID). */
  idempotencyKey?: () => string;
  /** The fetch to use (default `globalThis.fetch`). */
  fetch?: (request: Request) => Promise<Response>;
}

/** Per call, beside the operation's `params` and `body`: overrides of the client's limits, and a signal. */
export interface CallOptions {
  timeoutMs?: number;
  maxRetries?: number;
  maxRetryDelayMs?: number;
  signal?: AbortSignal;
}

/** A successful answer: the typed body and what the headers say about the call. */
export interface Answer<T> {
  data: T;
  status: number;
  notModified: false;
  /** The server's id of this call (quote it to support). */
  requestId: string | null;
  rateLimit: RateLimit | null;
  /** `Idempotent-Replayed: true`: the answer of an earlier call with the same Idempotency-Key, replayed. */
  replayed: boolean;
  response: Response;
}

/** A 304 to a GET sent with `If-None-Match`: what you hold is current; there is no body. */
export interface NotModified extends Omit<Answer<undefined>, "status" | "notModified"> {
  status: 304;
  notModified: true;
}

/** `almanac-client-typescript/0.1.0 node/20.19.0`, or undefined in a browser (which sends its own). */
export function userAgent(): string | undefined {
  if (
    typeof document !== "undefined" ||
    typeof (globalThis as { importScripts?: unknown }).importScripts === "function"
  )
    return undefined;
  const node = (globalThis as { process?: { versions?: { node?: string } } }).process?.versions?.node;
  return `almanac-client-typescript/${VERSION}${node ? ` node/${node}` : ""}`;
}

type Method = "get" | "post";
type PathsWith<M extends Method> = {
  [P in keyof paths]: paths[P] extends Record<M, infer Op> ? (Op extends undefined ? never : P) : never;
}[keyof paths];
type Init<P extends keyof paths, M extends Method> = MaybeOptionalInit<paths[P], M>;
type Rest<I> = undefined extends I ? [init?: I & CallOptions] : [init: I & CallOptions];
type DataOf<P extends keyof paths, M extends Method, I> = NonNullable<
  FetchResponse<paths[P][M] & Record<string | number, unknown>, I, "application/json">["data"]
>;
/** The call sends `If-None-Match` (in `params.header`), so a 304 may answer it. */
type SendsIfNoneMatch<I> = I extends { params: { header: { "If-None-Match": unknown } } } ? true : false;

export interface AlmanacClient {
  /** Calls a GET operation: resolves with its 200 answer (or a 304 when sent with If-None-Match), rejects with an AlmanacError. */
  get<P extends PathsWith<"get">, I extends Init<P, "get">>(
    path: P,
    ...init: Rest<I>
  ): Promise<
    SendsIfNoneMatch<I> extends true ? Answer<DataOf<P, "get", I>> | NotModified : Answer<DataOf<P, "get", I>>
  >;
  /** Calls a POST operation (with an Idempotency-Key): resolves with its 200 answer, rejects with an AlmanacError. */
  post<P extends PathsWith<"post">, I extends Init<P, "post">>(
    path: P,
    ...init: Rest<I>
  ): Promise<Answer<DataOf<P, "post", I>>>;
  /**
   * Classifies any number of texts in calls of 20 (the API's most per call), `concurrency` at a
   * time (default 2), within the RateLimit the server reports, waiting out 429s, one
   * Idempotency-Key per chunk; the results come back in input order (`index` is the text's).
   */
  classifyAll(texts: readonly string[], options?: ClassifyAllOptions): Promise<ClassifyAllResult>;
  /** The underlying openapi-fetch client (same key, idempotency, timeouts and retries), for `{ data, error, response }` results. */
  readonly raw: Client<paths, "application/json">;
}

function answerOf(result: { data?: unknown; error?: unknown; response: Response }): Answer<unknown> | NotModified {
  const res = result.response;
  if (!res.ok && res.status !== 304) throw errorOf(res, result.error);
  const common = {
    requestId: res.headers.get("x-request-id"),
    rateLimit: parseRateLimit(res.headers.get("ratelimit")),
    replayed: res.headers.get("idempotent-replayed") === "true",
    response: res,
  };
  return res.status === 304
    ? { ...common, data: undefined, status: 304, notModified: true }
    : { ...common, data: result.data, status: res.status, notModified: false };
}

export function createAlmanacClient(options: ClientOptions): AlmanacClient {
  const base = options.fetch ?? ((request: Request) => globalThis.fetch(request));
  const newKey = options.idempotencyKey ?? (() => randomUuid());
  const defaults: CallLimits = {
    maxRetries: options.maxRetries ?? 2,
    maxRetryDelayMs: options.maxRetryDelayMs ?? 10_000,
    timeoutMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
  };
  const ua = userAgent();
  const raw = createClient<paths, "application/json">({
    baseUrl: options.baseUrl.replace(/\/+$/, ""),
    fetch: retryingFetch(base, defaults),
    headers: {
      ...(options.apiKey ? { Authorization: `Bearer ${options.apiKey}` } : {}),
      ...(ua ? { "User-Agent": ua } : {}),
    },
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
  // openapi-fetch's overloads are checked at the call sites of get/post; here the arguments pass through.
  const untyped = raw as unknown as Record<"GET" | "POST", (path: string, init?: unknown) => Promise<never>>;
  const call = async (method: "GET" | "POST", path: string, init: CallOptions | undefined) => {
    const { timeoutMs, maxRetries, maxRetryDelayMs, signal, ...rest } = init ?? {};
    const limits: CallLimits = {
      timeoutMs: timeoutMs ?? defaults.timeoutMs,
      maxRetries: maxRetries ?? defaults.maxRetries,
      maxRetryDelayMs: maxRetryDelayMs ?? defaults.maxRetryDelayMs,
      signal,
    };
    let result: { data?: unknown; error?: unknown; response: Response };
    try {
      result = await untyped[method](path, { ...rest, fetch: retryingFetch(base, limits) });
    } catch (e) {
      // The transport's are AlmanacErrors already (network_error, timeout, aborted).
      if (e instanceof AlmanacError) throw e;
      throw noAnswer("network_error", e instanceof Error ? e.message : String(e), e);
    }
    return answerOf(result);
  };
  const client: AlmanacClient = {
    raw,
    get: ((path: string, init?: CallOptions) => call("GET", path, init)) as AlmanacClient["get"],
    post: ((path: string, init?: CallOptions) => call("POST", path, init)) as AlmanacClient["post"],
    classifyAll: (texts, opts) => classifyAll(client, texts, opts),
  };
  return client;
}
