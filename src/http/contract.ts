/**
 * What a piece of the request path tells the OpenAPI document about itself, kept beside the code
 * that does it: the answers it gives on its own, the headers it puts on the answers that pass
 * through it, the request parameters it reads, and who may call. A middleware carries it as
 * `.contract` (`documented()`); the document (features/ops/contract.ts) walks the app's chain as
 * Hono matches it for each operation (`app.routes`, registration order) and composes: an
 * operation's responses are its route's own plus those of every middleware on its path. Mounting a
 * middleware on a path is therefore all it takes to document what it adds there.
 */

export type Json = Record<string, unknown>;

export interface HeaderDoc {
  description: string;
  required?: boolean;
  schema: Json;
  /**
   * Declared once under `components.headers` by this name and referenced from each response (for
   * the headers every operation shares); otherwise written out where it applies.
   */
  component?: boolean;
}

export interface ErrorExample {
  /** One of errors.ts's codes (not imported: errors.ts declares the renderer's contract with these types). */
  code: string;
  message: string;
  reason?: string;
  details?: Json;
}

/** One response as the document writes it (a route's own, or a middleware's). */
export interface AnswerDoc {
  description: string;
  headers?: Record<string, HeaderDoc | Json>;
  content?: Record<string, Json>;
}

export interface Stamp {
  /** The statuses ("200", "default", …) of the answers it is put on; unset: every one. */
  on?: (status: string) => boolean;
  headers: Record<string, HeaderDoc>;
}

export interface ParameterDoc {
  in: "header" | "query";
  name: string;
  description: string;
  required?: boolean;
  schema: Json;
}

/** What the document knows of an operation when a contract asks whether it applies. */
export interface OperationFacts {
  method: string;
  path: string;
  /** The route declares parameters or a request body (so its input is validated). */
  takesInput: boolean;
}

export interface Contract {
  /** The requests it acts on (method in capitals); unset: every request that reaches it. */
  applies?: (op: OperationFacts) => boolean;
  /** The answers it gives itself, by status ("default" too). */
  answers?: Record<string, AnswerDoc>;
  /**
   * Answers it may also give from inside the route, through everything inner to it (a body it
   * limits is counted where the route reads it).
   */
  within?: Record<string, AnswerDoc>;
  /** Added only where the route does not declare that status itself (a generic fallback). */
  fallbacks?: Record<string, AnswerDoc>;
  /** Headers it sets on what passes through it (answers of inner middleware and the route). */
  stamps?: Stamp[];
  /** Request parameters it reads. */
  parameters?: ParameterDoc[];
  /** Who may call (OpenAPI security requirements), when this piece is what decides. */
  security?: Json[];
}

/** One contract, or those of what a handler uses, from the inside out. */
export type Contracts = Contract | readonly Contract[];
export type Documented<F> = F & { contract: Contracts };

/** `f` (a middleware, a handler) carrying `contract`. */
export function documented<F extends object>(f: F, contract: Contracts): Documented<F> {
  return Object.assign(f, { contract });
}

/** The contracts `f` carries, from the inside out (none when it carries none). */
export function contractsOf(f: unknown): readonly Contract[] {
  if (typeof f !== "function" && (typeof f !== "object" || f === null)) return [];
  const c = (f as { contract?: Contracts }).contract;
  return c === undefined ? [] : Array.isArray(c) ? c : [c as Contract];
}

/**
 * The longest value the document allows for a header it lists (If-None-Match, Stripe-Signature),
 * and the server takes: half of Node's limit on the request line and headers taken together
 * (http.maxHeaderSize, 16 KiB; a request over it is answered 431 before any route), so such a
 * header at its longest still leaves 8 KiB for the request line and the other headers.
 */
export const HEADERS_MAX = 8192;

const EXAMPLE_REQUEST_ID = "3f1c9a2e-5b7d-4e8a-9c61-0d2f4b8a7e15";

/** An answer in the one error shape, one named example per case. */
export function errorAnswer(
  description: string,
  examples: Record<string, ErrorExample> = {},
  headers?: Record<string, HeaderDoc>,
): AnswerDoc {
  const named = Object.entries(examples);
  return {
    description,
    ...(headers && { headers }),
    content: {
      "application/json": {
        schema: { $ref: "#/components/schemas/ErrorResponse" },
        ...(named.length > 0 && {
          examples: Object.fromEntries(
            named.map(([name, e]) => [name, { value: { error: { ...e, request_id: EXAMPLE_REQUEST_ID } } }]),
          ),
        }),
      },
    },
  };
}

/**
 * Every error says it must not be stored: a 404 or 405 without Cache-Control is heuristically
 * cacheable (RFC 9111 §4.2.2), and a CDN keeping "postcode not found" or a 429 would answer it
 * to the next caller.
 */
export const NO_STORE_HEADER: HeaderDoc = {
  description: "`no-store`: an error is never kept by a cache.",
  required: true,
  schema: { type: "string", maxLength: 16, enum: ["no-store"] },
};

/** `Retry-After` as every limit and refusal of this server sends it: whole seconds. */
export const retryAfterHeader = (description = "Seconds to wait before retrying."): HeaderDoc => ({
  description,
  schema: { type: "integer", format: "int32", minimum: 1, maximum: 86_400 },
});

/** The request id as the document declares it: envelope.ts sends it, and the edge's own answers. */
export const X_REQUEST_ID: HeaderDoc = {
  description: "Generated per request (never taken from the client); errors repeat it as `error.request_id`.",
  required: true,
  schema: { type: "string", format: "uuid", maxLength: 36 },
  component: true,
};
