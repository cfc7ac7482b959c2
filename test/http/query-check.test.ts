import { createRoute, OpenAPIHono, z } from "@hono/zod-openapi";
import { describe, expect, it } from "vitest";
import { renderError, toApiError } from "../../src/http/errors.js";
import type { AppEnv } from "../../src/http/types.js";
import { type AppRouteHandler, openapiRoute, validationError } from "../../src/http/validation.js";

/**
 * `openapiRoute` registers query-only routes (the lookups) with a synchronous query check instead
 * of @hono/zod-validator's async one: the same answers and the same document as the zod-validator
 * path with the app's defaultHook, for every kind of query string.
 */
const Query = z.object({
  code: z.string().regex(/^[A-Z]{2}$/, "must be two capital letters"),
  n: z.coerce.number().int().min(1).optional(),
  tag: z.union([z.string(), z.array(z.string())]).optional(),
});

const route = createRoute({
  method: "get",
  path: "/q",
  request: { query: Query },
  responses: { 200: { description: "ok", content: { "application/json": { schema: z.object({}).passthrough() } } } },
});

function build(inline: boolean): OpenAPIHono<AppEnv> {
  const app = new OpenAPIHono<AppEnv>({
    defaultHook: (result, c) => {
      if (!result.success) throw validationError(result.error, result.target, c);
    },
  });
  app.use(async (c, next) => {
    c.set("requestId", "r");
    await next();
  });
  const handler = (c: Parameters<AppRouteHandler<typeof route>>[0]) => c.json({ got: c.req.valid("query") }, 200);
  if (inline) openapiRoute(app, route, handler);
  else app.openapi(route, handler);
  app.onError((err, c) => renderError(c, toApiError(err)));
  return app;
}

const asserted = build(false);
const inline = build(true);

describe("query-only routes are checked by one synchronous step, answering as the zod-validator did", () => {
  it.each([
    "/q?code=DE",
    "/q?code=DE&n=3",
    "/q?code=DE&n=0",
    "/q?code=DE&n=x",
    "/q?code=de",
    "/q",
    "/q?code=DE&code=FR",
    "/q?code=DE&tag=a&tag=b",
    "/q?code=%44%45&tag=%E2%82%AC",
    "/q?code=D+E",
    "/q?code=DE&unknown=1",
    "/q?code=DE&n",
  ])("%s", async (path) => {
    const [a, b] = await Promise.all([asserted.request(path), inline.request(path)]);
    expect(b.status).toBe(a.status);
    expect(await b.json()).toEqual(await a.json());
  });

  it("the document is the same (the query's parameters are declared once)", () => {
    const doc = (app: OpenAPIHono<AppEnv>) =>
      app.getOpenAPI31Document({ openapi: "3.1.0", info: { title: "t", version: "1" } });
    expect(doc(inline)).toEqual(doc(asserted));
    expect(doc(inline).paths?.["/q"]?.get?.parameters?.map((p) => ("name" in p ? p.name : undefined))).toEqual([
      "code",
      "n",
      "tag",
    ]);
  });

  it("a route with other inputs (a body) keeps the zod-validator", async () => {
    const app = new OpenAPIHono<AppEnv>();
    openapiRoute(
      app,
      createRoute({
        method: "post",
        path: "/b",
        request: { query: Query, body: { content: { "application/json": { schema: z.object({ x: z.number() }) } } } },
        responses: { 200: { description: "ok" } },
      }),
      (c) => c.json({ q: c.req.valid("query"), b: c.req.valid("json") }, 200),
    );
    const res = await app.request("/b?code=DE", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ x: 1 }),
    });
    expect(await res.json()).toEqual({ q: { code: "DE" }, b: { x: 1 } });
  });
});
