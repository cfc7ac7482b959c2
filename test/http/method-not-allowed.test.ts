import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { errorOf, type TestApp, testApp } from "../helpers/app.js";

/**
 * 405 `method_not_allowed` (PRODUCT.md §2) for a path that exists for other methods, with `Allow`
 * naming exactly the methods that path serves — and 404 `not_found` (spec §4, message naming the
 * method and path) for a path that exists for none, trailing slash included: routes are strict.
 */
let t: TestApp;
beforeAll(async () => {
  t = await testApp({ DEMO_HOURLY_LIMIT: "1000000" });
});
afterAll(() => t.close());

const PATHS = [
  "/v1/moon",
  "/v1/moon/",
  "/v1/sun",
  "/v1/vat",
  "/v1/holidays",
  "/v1/holidays/working-days",
  "/v1/holidays/working-days/",
  "/v1/postcode",
  "/v1/weather",
  "/v1/weather/",
  "/v1/vibe/classify",
  "/v1/vibe/classify/",
  "/v1/mail/contact",
  "/v1/mail/contact/",
  "/v1/usage",
  "/v1/openapi.json",
  "/healthz",
  "/healthz/",
];

describe("every method named in Allow is served on that very path", () => {
  it.each(PATHS)("%s", async (path) => {
    const res = await t.app.request(path, { method: "DELETE" });
    if (res.status === 404) {
      expect((await errorOf(res)).error).toMatchObject({ code: "not_found", message: `No route for DELETE ${path}` });
      return;
    }
    expect(res.status).toBe(405);
    expect((await errorOf(res)).error).toMatchObject({
      code: "method_not_allowed",
      message: `Method DELETE is not allowed on ${path}.`,
    });
    const allow = (res.headers.get("allow") ?? "").split(", ");
    expect(allow.length).toBeGreaterThan(0);
    for (const method of allow) {
      const served = await t.app.request(path, { method, ...(method === "POST" && { body: "{}" }) });
      expect([method, served.status]).not.toEqual([method, 404]);
      expect([method, served.status]).not.toEqual([method, 405]);
    }
  });

  it("a trailing slash is another path: 404 for every method, naming it", async () => {
    for (const [method, path] of [
      ["GET", "/v1/moon/"],
      ["PUT", "/v1/moon/"],
      ["GET", "/v1/vibe/classify/"],
      ["POST", "/v1/vibe/classify/"],
    ] as const) {
      const res = await t.app.request(path, { method });
      expect(res.status).toBe(404);
      expect((await errorOf(res)).error.message).toBe(`No route for ${method} ${path}`);
    }
  });

  it("a known path and another method: 405 with the exact message and Allow", async () => {
    for (const [method, path, allow] of [
      ["PUT", "/v1/moon", "GET, HEAD"],
      ["PATCH", "/v1/weather", "GET, HEAD"],
      ["GET", "/v1/vibe/classify", "POST"],
      ["DELETE", "/v1/mail/contact", "POST"],
    ] as const) {
      const res = await t.app.request(path, { method });
      expect(res.status).toBe(405);
      expect(res.headers.get("allow")).toBe(allow);
      expect((await errorOf(res)).error.message).toBe(`Method ${method} is not allowed on ${path}.`);
    }
  });
});
