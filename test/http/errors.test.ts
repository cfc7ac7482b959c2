import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ApiError } from "../../src/http/errors.js";
import { readJsonBody } from "../../src/http/json-body.js";
import { errorOf, type TestApp, testApp } from "../helpers/app.js";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe("HTTP core, in process", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await testApp({ BODY_LIMIT_BYTES: "2048" });
    // Test-only routes (the real app has no route that echoes or throws on purpose).
    t.app.post("/test/echo", async (c) => c.json({ got: await readJsonBody(c, 2048) }));
    t.app.get("/test/boom", () => {
      throw new Error("secret database password in a stack trace");
    });
    t.app.get("/test/expected", () => {
      throw new ApiError("rate_limited", "Slow down.", { reason: "X", headers: { "Retry-After": "7" } });
    });
  });
  afterAll(() => t.close());

  const call = (path: string, init?: RequestInit) => t.app.request(path, init);

  it("stamps a unique X-Request-Id on every kind of response", async () => {
    const responses = await Promise.all([
      call("/healthz"),
      call("/v1/nope"),
      call("/healthz", { method: "DELETE" }),
      call("/test/echo", { method: "POST", body: "{not json" }),
      call("/test/echo", { method: "POST", body: "x".repeat(4096), headers: { "Content-Length": "4096" } }),
      call("/test/boom"),
      ...Array.from({ length: 50 }, () => call("/healthz")),
    ]);
    const ids = responses.map((r) => r.headers.get("x-request-id"));
    for (const id of ids) expect(id).toMatch(UUID);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it("never takes the request id from the client", async () => {
    const res = await call("/healthz", { headers: { "X-Request-Id": "attacker-chosen" } });
    expect(res.headers.get("x-request-id")).not.toBe("attacker-chosen");
  });

  it("404 names the method and the path, in the one error shape", async () => {
    const res = await call("/v1/nope?x=1", { method: "PUT" });
    expect(res.status).toBe(404);
    expect(res.headers.get("content-type")).toMatch(/^application\/json/);
    const body = await errorOf(res);
    expect(Object.keys(body)).toEqual(["error"]);
    expect(body.error).toEqual({
      code: "not_found",
      message: "No route for PUT /v1/nope",
      request_id: res.headers.get("x-request-id"),
    });
  });

  it("405 with Allow for a known path and another method", async () => {
    const res = await call("/readyz", { method: "POST" });
    expect(res.status).toBe(405);
    expect(res.headers.get("allow")).toBe("GET, HEAD");
    expect((await errorOf(res)).error.code).toBe("method_not_allowed");
  });

  it("400 invalid_body for malformed or missing JSON, saying the body must be JSON", async () => {
    for (const body of ["{not json", "", "   "]) {
      const res = await call("/test/echo", { method: "POST", body, headers: { "Content-Type": "application/json" } });
      expect(res.status).toBe(400);
      const err = (await errorOf(res)).error;
      expect(err.code).toBe("invalid_body");
      expect(err.message).toBe("Request body must be JSON.");
    }
  });

  it("413 payload_too_large when Content-Length is over the limit", async () => {
    const res = await call("/test/echo", {
      method: "POST",
      body: JSON.stringify("x".repeat(5000)),
      headers: { "Content-Type": "application/json" },
    });
    expect(res.status).toBe(413);
    expect((await errorOf(res)).error.code).toBe("payload_too_large");
  });

  it("500 internal hides the cause and keeps the request id", async () => {
    const res = await call("/test/boom");
    expect(res.status).toBe(500);
    const text = await res.text();
    expect(text).not.toContain("secret");
    expect(text).not.toContain("at ");
    const body = JSON.parse(text);
    expect(body).toEqual({
      error: { code: "internal", message: "Internal error.", request_id: res.headers.get("x-request-id") },
    });
  });

  it("an expected ApiError keeps its reason and headers", async () => {
    const res = await call("/test/expected");
    expect(res.status).toBe(429);
    expect(res.headers.get("retry-after")).toBe("7");
    expect((await errorOf(res)).error).toMatchObject({ code: "rate_limited", reason: "X", message: "Slow down." });
  });

  it("serves health, readiness, metrics, the OpenAPI document and the docs page", async () => {
    expect(await (await call("/healthz")).json()).toEqual({ status: "ok" });
    expect(await (await call("/readyz")).json()).toEqual({ status: "ready", checks: { database: "ok" } });
    const metrics = await (await call("/metrics")).text();
    expect(metrics).toContain('http_requests_total{method="GET",route="/healthz",status="200"}');
    expect(metrics).toContain("http_request_duration_seconds_bucket");
    const doc = (await (await call("/v1/openapi.json")).json()) as { openapi: string };
    expect(doc.openapi).toBe("3.1.0");
    const page = await (await call("/docs")).text();
    expect(page).toContain("/docs/assets/swagger-ui-bundle.js");
    expect(page).not.toMatch(/https?:\/\//); // no CDN
    const asset = await call("/docs/assets/swagger-ui-bundle.js");
    expect(asset.status).toBe(200);
    expect((await asset.text()).length).toBeGreaterThan(100_000);
    expect((await call("/docs/assets/..%2fpackage.json")).status).toBe(404);
  });

  it("unmatched paths share one metrics label", async () => {
    await call("/v1/random-1");
    await call("/v1/random-2");
    const metrics = await (await call("/metrics")).text();
    expect(metrics).not.toContain("random-1");
    expect(metrics).toMatch(/route="unmatched",status="404"/);
  });
});
