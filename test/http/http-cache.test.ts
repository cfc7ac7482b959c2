import { createHash } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { etagOf } from "../../src/http/http-cache.js";
import { type TestApp, testApp } from "../helpers/app.js";

let t: TestApp;
let other: TestApp;
beforeAll(async () => {
  t = await testApp({ DEMO_HOURLY_LIMIT: "1000" });
  other = await testApp({ DEMO_HOURLY_LIMIT: "1000" });
});
afterAll(async () => {
  await t.close();
  await other.close();
});

const PINNED = [
  ["/v1/moon?date=2024-01-25&lat=51.5&lon=-0.1", "public, max-age=86400"],
  ["/v1/sun?lat=51.5&lon=-0.1&date=2024-06-21", "public, max-age=86400"],
  ["/v1/holidays?country=GB&year=2026", "public, max-age=86400"],
  ["/v1/holidays/working-days?country=DE&date=2026-12-24&add=3", "public, max-age=86400"],
  ["/v1/vat?code=DE&date=2026-01-01", "public, max-age=3600"],
] as const;

describe("HTTP caching of deterministic lookups", () => {
  it.each(PINNED)("%s: strong ETag, the same on every call and instance, Cache-Control %s", async (path, cc) => {
    const a = await t.app.request(path);
    const b = await t.app.request(path);
    const c = await other.app.request(path);
    expect(a.status).toBe(200);
    const tag = a.headers.get("etag");
    expect(tag).toMatch(/^"[0-9a-f]{40}"$/); // strong: no W/
    expect(tag).toBe(
      `"${createHash("sha1")
        .update(Buffer.from(await a.arrayBuffer()))
        .digest("hex")}"`,
    );
    expect(b.headers.get("etag")).toBe(tag);
    expect(c.headers.get("etag")).toBe(tag);
    expect(a.headers.get("cache-control")).toBe(cc);
  });

  it.each(PINNED)(
    "%s: If-None-Match → 304 with no body, still with X-Request-Id and the demo-tier headers",
    async (path) => {
      const tag = (await t.app.request(path)).headers.get("etag") ?? "";
      for (const header of [tag, `"nope", ${tag}`, `W/${tag}`]) {
        const res = await t.app.request(path, { headers: { "If-None-Match": header } });
        expect(res.status).toBe(304);
        expect(await res.text()).toBe("");
        expect(res.headers.get("etag")).toBe(tag);
        expect(res.headers.get("x-request-id")).toBeTruthy();
        expect(res.headers.get("ratelimit")).toBeTruthy();
      }
    },
  );

  it("an answer the route does not tag itself gets the same kind of tag from the middleware", async () => {
    // A VAT number's answer is sent with c.json (it is not serialised in parts): httpCache hashes it in-line.
    const res = await t.app.request("/v1/vat?code=DE136695976&date=2026-01-01");
    expect(res.status).toBe(200);
    expect(res.headers.get("etag")).toBe(etagOf(await res.text()));
    expect(etagOf("é")).toBe(`"${createHash("sha1").update(Buffer.from("é", "utf8")).digest("hex")}"`);
  });

  it("another tag gets the full answer", async () => {
    const res = await t.app.request(PINNED[0][0], { headers: { "If-None-Match": '"0000"' } });
    expect(res.status).toBe(200);
    expect((await res.json()) as object).toHaveProperty("phase");
  });

  it("an answer about 'now' is tagged but must be revalidated (no-cache)", async () => {
    for (const path of ["/v1/moon", "/v1/vat?code=DE", "/v1/holidays?country=GB"]) {
      const res = await t.app.request(path);
      expect(res.status).toBe(200);
      expect(res.headers.get("cache-control")).toBe("no-cache");
      expect(res.headers.get("etag")).toBeTruthy();
    }
  });

  // A 404 or 405 without Cache-Control is heuristically cacheable (RFC 9111 §4.2.2; some CDNs keep
  // one for an hour by default), so "not cacheable" has to be said: no-store, on every error.
  it.each([
    ["/v1/moon?date=2024-13-45", {}, 400],
    ["/v1/nope", {}, 404],
    ["/v1/postcode?postcode=Q1%201AA", {}, 404],
    ["/v1/holidays?country=XX", {}, 404],
    ["/v1/vat?code=US", {}, 404],
    ["/v1/moon", { method: "PUT" }, 405],
    ["/v1/vibe/classify", {}, 405],
    ["/v1/vibe/classify", { method: "POST", body: "[]" }, 401],
    ["/v1/moon", { headers: { Authorization: "Bearer alm_unknown" } }, 401],
  ] as const)(
    "errors are neither tagged nor stored by a cache: %s %j → %i, Cache-Control: no-store",
    async (path, init, status) => {
      const res = await t.app.request(path, init);
      expect(res.status).toBe(status);
      expect(res.headers.get("etag")).toBeNull();
      expect(res.headers.get("cache-control")).toBe("no-store");
    },
  );

  it("a demo-tier 429 is not stored either", async () => {
    const small = await testApp({ DEMO_HOURLY_LIMIT: "1" });
    try {
      expect((await small.app.request(PINNED[0][0])).status).toBe(200);
      const res = await small.app.request(PINNED[0][0]);
      expect(res.status).toBe(429);
      expect(res.headers.get("cache-control")).toBe("no-store");
      expect(res.headers.get("etag")).toBeNull();
    } finally {
      await small.close();
    }
  });
});
