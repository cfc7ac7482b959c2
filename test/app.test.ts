import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type TestApp, testApp } from "./helpers/app.js";

/**
 * Operational and browser routes that are deliberately not part of the public API description.
 * Anything else the app serves must be described in /v1/openapi.json, and vice versa.
 */
const OPERATIONAL = [
  "GET /",
  "GET /favicon.svg",
  "GET /favicon.ico",
  "GET /healthz",
  "GET /readyz",
  "GET /metrics",
  "GET /docs",
  "GET /docs/init.js",
  "GET /docs/assets/{file}",
  "GET /v1/openapi.json",
];
const isOperational = (route: string) =>
  OPERATIONAL.includes(route) ||
  /^(GET|POST) \/account(\/|$)/.test(route) ||
  /^(GET|POST) \/api\/auth\/\*$/.test(route);

let t: TestApp;
beforeAll(async () => {
  t = await testApp();
});
afterAll(() => t.close());

describe("route inventory", () => {
  it("the routes the app serves are exactly the OpenAPI paths plus the operational allow-list", async () => {
    const served = new Set(
      t.app.routes
        .filter((r) => r.method !== "ALL")
        .map((r) => `${r.method} ${r.path.replace(/:([A-Za-z0-9_]+)/g, "{$1}")}`),
    );
    const doc = (await (await t.app.request("/v1/openapi.json")).json()) as {
      paths: Record<string, object>;
      webhooks: Record<string, object>;
    };
    // Webhooks are keyed by the path they are sent to.
    const described = new Set(
      Object.entries({ ...doc.paths, ...doc.webhooks }).flatMap(([path, ops]) =>
        Object.keys(ops).map((m) => `${m.toUpperCase()} ${path}`),
      ),
    );
    const undocumented = [...served].filter((r) => !described.has(r) && !isOperational(r)).sort();
    const phantom = [...described].filter((r) => !served.has(r)).sort();
    expect({ undocumented, phantom }).toEqual({ undocumented: [], phantom: [] });
    // The allow-list only names routes that exist: a removed route must leave it too.
    expect(OPERATIONAL.filter((r) => !served.has(r))).toEqual([]);
    expect(described.size).toBeGreaterThanOrEqual(9);
  });
});
