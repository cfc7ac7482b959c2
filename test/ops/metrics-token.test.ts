import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { errorOf, type TestApp, testApp } from "../helpers/app.js";

const TOKEN = "s3cret-metrics-token-0123";

describe("/metrics behind METRICS_TOKEN", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await testApp({ METRICS_TOKEN: TOKEN });
  });
  afterAll(() => t.close());

  it.each([
    ["no header", undefined],
    ["a wrong token", "Bearer wrong"],
    ["the token without Bearer", TOKEN],
    ["a longer token", `Bearer ${TOKEN}x`],
  ])("%s → 401 unauthorized with WWW-Authenticate", async (_name, authorization) => {
    const res = await t.app.request("/metrics", { headers: authorization ? { Authorization: authorization } : {} });
    expect(res.status).toBe(401);
    expect(res.headers.get("www-authenticate")).toBe('Bearer realm="metrics"');
    expect((await errorOf(res)).error).toMatchObject({
      code: "unauthorized",
      message: "Metrics need the bearer token set in METRICS_TOKEN.",
    });
  });

  it("the right token gets the Prometheus text", async () => {
    const res = await t.app.request("/metrics", { headers: { Authorization: `Bearer ${TOKEN}` } });
    expect(res.status).toBe(200);
    expect(await res.text()).toContain("http_requests_total");
  });

  it("unset, /metrics stays open (the default, for a private network)", async () => {
    const open = await testApp();
    try {
      expect((await open.app.request("/metrics")).status).toBe(200);
    } finally {
      await open.close();
    }
  });

  it("a token under 16 characters is a configuration error", async () => {
    await expect(testApp({ METRICS_TOKEN: "short" })).rejects.toThrow(/METRICS_TOKEN/);
  });
});
