import type { OpenAPIHono } from "@hono/zod-openapi";
import type { Context, MiddlewareHandler } from "hono";
import { z } from "zod";
import { type Contract, errorAnswer } from "./contract.js";
import { ApiError } from "./errors.js";
import type { AppEnv } from "./types.js";

type Target = "query" | "json" | "param" | "header" | "form" | "cookie";

/**
 * Turns a failed request schema into 400 `invalid_body`. For query parameters the message
 * names the first offending parameter (e.g. `query parameter "code" is required`); details always carry z.flattenError's formErrors/fieldErrors.
 */
export function validationError(error: z.ZodError, target: Target | string, c: Context): ApiError {
  const details = z.flattenError(error) as unknown as Record<string, unknown>;
  const first = error.issues[0];
  if (target === "query" && first) {
    const name = String(first.path[0] ?? "");
    const given = name ? c.req.query(name) : undefined;
    const message =
      given === undefined
        ? `query parameter "${name}" is required`
        : `query parameter "${name}" is invalid: ${first.message}`;
    return new ApiError("invalid_body", message, { details });
  }
  if (target === "json") return new ApiError("invalid_body", "Request body is invalid.", { details });
  return new ApiError("invalid_body", `Invalid ${target}: ${first?.message ?? "invalid input"}`, { details });
}

/** The 400 of a route whose parameters or body are checked (its own 400, with examples, comes first). */
export const VALIDATION_CONTRACT: Contract = {
  applies: (op) => op.takesInput,
  fallbacks: { "400": errorAnswer("A parameter or the body is invalid; the message names it.") },
};

/**
 * Routes whose only input is their query string (the lookups) are checked by one synchronous
 * middleware instead of @hono/zod-validator's, which is async at every step (`safeParseAsync`,
 * an awaited hook, an awaited `next`): the same value (Hono's `c.req.queries()`, one string per
 * name unless repeated), the same schema, the same 400 (`validationError`, as the app's
 * `defaultHook` throws it), and the same document (registered as `app.openapi` would). Call once,
 * before the routes register; a route with a hook of its own or other inputs is left as it was.
 */
export function checkQueriesInline(app: OpenAPIHono<AppEnv>): void {
  const openapi = app.openapi;
  app.openapi = ((route, handler, hook) => {
    const { middleware, hide, ...rest } = route;
    const query = route.request?.query;
    if (!query || hook !== undefined || Object.keys(route.request ?? {}).length !== 1) {
      return openapi(route, handler, hook);
    }
    if (!hide) app.openAPIRegistry.registerPath(rest);
    const before = middleware === undefined ? [] : Array.isArray(middleware) ? middleware : [middleware];
    const { request: _checkedHere, ...served } = rest;
    // Typed as the route: the handler still reads `c.req.valid("query")`, which queryCheck fills.
    return openapi({ ...served, hide: true, middleware: [...before, queryCheck(query)] } as typeof route, handler);
  }) as typeof app.openapi;
}

function queryCheck(schema: z.ZodType): MiddlewareHandler<AppEnv> {
  return (c, next) => {
    const value: Record<string, string | string[]> = {};
    for (const [name, values] of Object.entries(c.req.queries())) {
      value[name] = values.length === 1 ? (values[0] as string) : values;
    }
    const result = schema.safeParse(value);
    if (!result.success) throw validationError(result.error, "query", c);
    c.req.addValidatedData("query", result.data as object);
    return next();
  };
}
