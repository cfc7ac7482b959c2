import { createRoute, OpenAPIHono, z } from "@hono/zod-openapi";
import type { MiddlewareHandler } from "hono";
import { describe, expect, it } from "vitest";
import { contractDocument } from "../../src/features/ops/contract.js";
import { documented, errorAnswer } from "../../src/http/contract.js";
import { METHOD_NOT_ALLOWED_CONTRACT } from "../../src/http/method-not-allowed.js";

/**
 * An operation's responses are its route's own plus those of every middleware on its
 * path, read off the chain itself. Mounting a documented middleware on a path is all it takes: its
 * answers and headers appear on that path's operations (the ones it applies to), nowhere else, and
 * what is mounted outside it stamps its answers too.
 */

type Responses = Record<string, { headers?: Record<string, unknown> }>;

const ok = (path: string, method: "get" | "post") =>
  createRoute({
    method,
    path,
    responses: { 200: { description: "ok", content: { "application/json": { schema: z.object({}) } } } },
  });

/** A fresh middleware each time (documented() attaches the contract to the function itself). */
const brewing = (): MiddlewareHandler => async (_c, next) => next();
/** Mounted first: outside everything else. */
const outer = documented(brewing(), {
  stamps: [{ headers: { "X-Outer": { description: "On every answer.", schema: { type: "string", maxLength: 8 } } } }],
});

function documentOf(mount: (app: OpenAPIHono) => void) {
  const app = new OpenAPIHono();
  app.use(outer);
  mount(app);
  app.openapi(ok("/v1/tea/pot", "get"), (c) => c.json({}, 200));
  app.openapi(ok("/v1/tea/pot", "post"), (c) => c.json({}, 200));
  app.openapi(ok("/v1/coffee", "get"), (c) => c.json({}, 200));
  const doc = contractDocument(app.getOpenAPI31Document({ openapi: "3.1.0", info: { title: "t", version: "1" } }), {
    chain: app.routes,
    inner: [METHOD_NOT_ALLOWED_CONTRACT],
    renderer: {},
    edge: [],
  }) as unknown as { paths: Record<string, Record<string, { responses: Responses; security?: unknown[] }>> };
  const at = (path: string, method: string) => doc.paths[path]?.[method]?.responses ?? {};
  return { at, doc };
}

const headersOf = (r: Responses, status: string) => Object.keys(r[status]?.headers ?? {}).sort();

describe("the document composes what the chain's middleware declares", () => {
  it("a middleware mounted on a path adds its answers and headers to that path's operations it applies to", () => {
    const teapot = documented(brewing(), {
      applies: (op) => op.method === "GET",
      answers: { "418": errorAnswer("A teapot.") },
      stamps: [{ headers: { "X-Brew": { description: "Brewed.", schema: { type: "string", maxLength: 8 } } } }],
      security: [{ bearer: [] }],
    });
    const { at, doc } = documentOf((app) => app.use("/v1/tea/*", teapot));

    const get = at("/v1/tea/pot", "get");
    expect(Object.keys(get)).toEqual(["200", "405", "418"]);
    // Its header on what passes through it; its own answer carries what is mounted outside it.
    expect(headersOf(get, "200")).toEqual(["X-Brew", "X-Outer"]);
    expect(headersOf(get, "418")).toEqual(["X-Outer"]);
    expect(doc.paths["/v1/tea/pot"]?.get?.security).toEqual([{ bearer: [] }]);

    // Not for POST (applies), nor for another path (not mounted there).
    expect(Object.keys(at("/v1/tea/pot", "post"))).toEqual(["200", "405"]);
    expect(headersOf(at("/v1/tea/pot", "post"), "200")).toEqual(["X-Outer"]);
    expect(doc.paths["/v1/tea/pot"]?.post?.security).toEqual([]);
    expect(Object.keys(at("/v1/coffee", "get"))).toEqual(["200", "405"]);
  });

  it("without the middleware, nothing of it is declared", () => {
    const { at } = documentOf(() => {});
    expect(Object.keys(at("/v1/tea/pot", "get"))).toEqual(["200", "405"]);
    expect(headersOf(at("/v1/tea/pot", "get"), "200")).toEqual(["X-Outer"]);
  });

  it("a 405 passes through what applies to the methods the path does not serve", () => {
    const onDelete = documented(brewing(), {
      applies: (op) => op.method === "DELETE",
      stamps: [{ headers: { "X-Gone": { description: "Gone.", schema: { type: "string", maxLength: 8 } } } }],
    });
    const { at } = documentOf((app) => app.use("/v1/*", onDelete));
    expect(headersOf(at("/v1/coffee", "get"), "405")).toEqual(["Allow", "X-Gone", "X-Outer"]);
    expect(headersOf(at("/v1/coffee", "get"), "200")).toEqual(["X-Outer"]);
  });
});
