import type { OpenAPIHono, RouteConfig, RouteHandler, RouteHook } from "@hono/zod-openapi";
import type { Context, MiddlewareHandler } from "hono";
import { z } from "zod";
import { type Contract, errorAnswer } from "./contract.js";
import { ApiError } from "./errors.js";
import type { AppEnv } from "./types.js";

type Target = "query" | "json" | "param" | "header" | "form" | "cookie";

type QueryValue = Record<string, string | string[]>;

/** fieldErrors entry of a parameter that is missing (or sent empty where it is required). */
const REQUIRED = "is required";
/** fieldErrors entry of a parameter that takes one value and was sent more than once. */
const GIVEN_ONCE = "must be given once";

/**
 * Turns a failed request schema into 400 `invalid_body`. For query parameters the message
 * names the first offending parameter (e.g. `query parameter "code" is required`); details always carry z.flattenError's formErrors/fieldErrors.
 * `given` is the query as checked (default: the request's), so a required parameter the caller
 * counts as missing (sent empty) is answered as missing.
 */
export function validationError(error: z.ZodError, target: Target | string, c: Context, given?: QueryValue): ApiError {
  const first = error.issues[0];
  if (target === "query" && first) {
    const query = given ?? queryValue(c);
    const issues = error.issues.map((issue) => asClientSees(issue, query));
    const details = z.flattenError(new z.ZodError(issues)) as unknown as Record<string, unknown>;
    const name = nameOf(first);
    const message =
      query[name] === undefined
        ? `query parameter "${name}" is required`
        : `query parameter "${name}" is invalid: ${issues[0]?.message}`;
    return new ApiError("invalid_body", message, { details });
  }
  const details = z.flattenError(error) as unknown as Record<string, unknown>;
  if (target === "json") return new ApiError("invalid_body", "Request body is invalid.", { details });
  return new ApiError("invalid_body", `Invalid ${target}: ${first?.message ?? "invalid input"}`, { details });
}

/**
 * A query issue in the client's terms: a type error on a parameter not sent is "is required", and
 * one on a parameter sent twice is "must be given once" (list parameters take repeats, so their
 * schema never meets an array with a type error) — not zod's "expected string, received array".
 */
function asClientSees(issue: z.core.$ZodIssue, query: QueryValue): z.core.$ZodIssue {
  if (issue.code !== "invalid_type") return issue;
  const value = query[nameOf(issue)];
  if (value === undefined) return { ...issue, message: REQUIRED };
  if (Array.isArray(value)) return { ...issue, message: GIVEN_ONCE };
  return issue;
}

const nameOf = (issue: z.core.$ZodIssue): string => String(issue.path[0] ?? "");

/** The query as the schemas read it: one string per name, or every value of a repeated name. */
function queryValue(c: Context): QueryValue {
  const value: QueryValue = {};
  for (const [name, values] of Object.entries(c.req.queries())) {
    value[name] = values.length === 1 ? (values[0] as string) : values;
  }
  return value;
}

/** The 400 of a route whose parameters or body are checked (its own 400, with examples, comes first). */
export const VALIDATION_CONTRACT: Contract = {
  applies: (op) => op.takesInput,
  fallbacks: { "400": errorAnswer("A parameter or the body is invalid; the message names it.") },
};

/** A route's handler, typed by its route (as the Hono OpenAPI starter's `AppRouteHandler`). */
export type AppRouteHandler<R extends RouteConfig> = RouteHandler<R, AppEnv>;

/** A route's own validation hook (instead of the app's `defaultHook`), typed by its route. */
export type AppRouteHook<R extends RouteConfig> = RouteHook<R, AppEnv>;

/**
 * Registers `route` on `app` with `handler`, as `app.openapi(route, handler)` does. A route whose
 * only input is its query string (the lookups) is checked by one synchronous middleware instead
 * of @hono/zod-validator's, which is async at every step (`safeParseAsync`, an awaited hook, an
 * awaited `next`): the same value (Hono's `c.req.queries()`, one string per name unless
 * repeated), the same schema, the same 400 (`validationError`, as the app's `defaultHook` throws
 * it, but a required parameter sent blank is answered as missing: `queryError`), and the same
 * document (registered as `app.openapi` would). A route with other inputs, or a hook of its own, is `app.openapi`'s.
 */
export function openapiRoute<R extends RouteConfig>(
  app: OpenAPIHono<AppEnv>,
  route: R,
  handler: AppRouteHandler<R>,
  hook?: AppRouteHook<R>,
): void {
  const query = route.request?.query;
  if (!query || hook !== undefined || Object.keys(route.request ?? {}).length !== 1) {
    // The route's own hook, in the type openapi() gives it (RouteHook's result type is wider).
    app.openapi(route, handler, hook as Parameters<typeof app.openapi<R>>[2]);
    return;
  }
  const { middleware, hide, ...rest } = route;
  if (!hide) app.openAPIRegistry.registerPath(rest);
  const before = middleware === undefined ? [] : Array.isArray(middleware) ? middleware : [middleware];
  const { request: _checkedHere, ...served } = rest;
  // Typed as the route: the handler still reads `c.req.valid("query")`, which queryCheck fills.
  app.openapi({ ...served, hide: true, middleware: [...before, queryCheck(query)] } as R, handler);
}

function queryCheck(schema: z.ZodType): MiddlewareHandler<AppEnv> {
  return (c, next) => {
    const value = queryValue(c);
    const result = schema.safeParse(value);
    if (!result.success) throw queryError(schema, value, result.error, c);
    c.req.addValidatedData("query", result.data as object);
    return next();
  };
}

/**
 * The 400 of a failed query check. A parameter sent empty (`postcode=`, or only spaces) that the
 * schema needs is answered as missing — `query parameter "postcode" is required` — as a form left
 * blank means; an optional one sent empty stays a bad value, named.
 */
function queryError(schema: z.ZodType, value: QueryValue, error: z.ZodError, c: Context): ApiError {
  const blank = Object.keys(value).filter((name) => {
    const v = value[name];
    return typeof v === "string" && v.trim() === "";
  });
  if (blank.length === 0) return validationError(error, "query", c, value);
  const without: QueryValue = { ...value };
  for (const name of blank) delete without[name];
  const absent = schema.safeParse(without);
  if (absent.success) return validationError(error, "query", c, value);
  const needed = new Set(absent.error.issues.map(nameOf).filter((name) => blank.includes(name)));
  if (needed.size === 0) return validationError(error, "query", c, value);
  for (const name of blank) if (!needed.has(name)) without[name] = value[name] as string;
  // The issues of the query with the needed ones absent, first among them the absent ones'.
  const missing = absent.error.issues.filter((i) => needed.has(nameOf(i)));
  const rest = error.issues.filter((i) => !needed.has(nameOf(i)));
  return validationError(new z.ZodError([...missing, ...rest]), "query", c, without);
}
