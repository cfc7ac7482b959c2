import type { Hono } from "hono";
import { type Contract, errorAnswer } from "./contract.js";

/** The 405 any path answers for a method it does not serve (app.ts's notFound). */
export const METHOD_NOT_ALLOWED_CONTRACT: Contract = {
  answers: {
    "405": errorAnswer(
      "The path exists but not for this method.",
      {},
      {
        Allow: {
          description: "The methods the path serves.",
          required: true,
          schema: { type: "string", maxLength: 64 },
          component: true,
        },
      },
    ),
  },
};

/**
 * Builds a lookup from a concrete path to the methods some route serves there, so an unknown
 * method on a known path is 405 with `Allow`, not 404. Call after every route is registered.
 */
// biome-ignore lint/suspicious/noExplicitAny: any Hono instance, whatever its env
export function allowedMethods(app: Hono<any, any, any>): (path: string) => string[] {
  const routes = app.routes.filter((r) => r.method !== "ALL").map((r) => ({ method: r.method, re: pattern(r.path) }));
  return (path) => {
    const methods = new Set(routes.filter((r) => r.re.test(path)).map((r) => r.method));
    if (methods.has("GET")) methods.add("HEAD");
    return [...methods].sort();
  };
}

/**
 * A Hono route path (`/v1/*`, `/keys/:id`) as a regular expression over concrete paths. Routes are
 * strict, as Hono's router is: `/v1/moon/` is not `/v1/moon` (a 405 there named methods that then
 * answered 404).
 */
export function pattern(path: string): RegExp {
  const body = path
    .split("/")
    .map((seg) => {
      if (seg === "*") return ".*";
      if (seg.startsWith(":")) return "[^/]+";
      return seg.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
    })
    .join("/");
  return new RegExp(`^${body}$`);
}
