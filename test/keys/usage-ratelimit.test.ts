import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type TestApp, testApp } from "../helpers/app.js";

/**
 * GET /v1/usage counts against the key's rate limit, so its answers say where that limit stands
 * (RateLimit-Policy, RateLimit), as classify's do; and the document declares what it sends.
 */

let t: TestApp;
let key: string;
let responses: Record<string, { headers?: Record<string, unknown> }>;
beforeAll(async () => {
  t = await testApp({});
  key = (await t.deps.keys.create({ name: "usage", permissions: [], ratelimit: { limit: 2, durationSec: 60 } })).key;
  const doc = (await (await t.app.request("/v1/openapi.json")).json()) as {
    paths: Record<string, { get: { responses: typeof responses } }>;
  };
  responses = doc.paths["/v1/usage"]?.get.responses ?? {};
});
afterAll(() => t.close());

const usage = () => t.app.request("/v1/usage", { headers: { Authorization: `Bearer ${key}` } });
const declared = (status: number) => Object.keys(responses[String(status)]?.headers ?? {}).map((h) => h.toLowerCase());

describe("GET /v1/usage carries the key's RateLimit headers", () => {
  it("on its 200 and on the 429 once the limit is spent, each declared", async () => {
    const first = await usage();
    expect(first.status).toBe(200);
    expect(first.headers.get("ratelimit-policy")).toBe('"key";q=2;w=60');
    expect(first.headers.get("ratelimit")).toMatch(/^"key";r=1;t=\d+$/);
    expect(declared(200)).toEqual(expect.arrayContaining(["ratelimit", "ratelimit-policy", "cache-control"]));

    expect((await usage()).status).toBe(200);
    const refused = await usage();
    expect(refused.status).toBe(429);
    expect(refused.headers.get("ratelimit")).toMatch(/^"key";r=0;t=\d+$/);
    expect(refused.headers.get("retry-after")).toMatch(/^\d+$/);
    expect(declared(429)).toEqual(expect.arrayContaining(["ratelimit", "ratelimit-policy", "retry-after"]));
  });
});
