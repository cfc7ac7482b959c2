import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { errorOf, expectRateLimited, type TestApp, testApp } from "../helpers/app.js";

describe("repeated invalid keys from one IP are throttled (INVALID_KEY_LIMIT per 10 minutes)", () => {
  let t: TestApp;
  let good: string;
  beforeAll(async () => {
    t = await testApp({ INVALID_KEY_LIMIT: "3", DEMO_HOURLY_LIMIT: "1000" });
    good = (await t.deps.keys.create({ name: "good", permissions: ["vibe.classify"] })).key;
  });
  afterAll(() => t.close());

  const from = (ip: string, path: string, authorization?: string, init: RequestInit = {}) =>
    t.app.request(
      path,
      { ...init, headers: { ...(authorization && { Authorization: authorization }), ...init.headers } },
      { incoming: { socket: { remoteAddress: ip } } },
    );
  const classify = (ip: string, authorization: string) =>
    from(ip, "/v1/vibe/classify", authorization, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify(["hi"]),
    });

  it("3 rejected keys (GET or classify) → then 429 INVALID_KEY_LIMIT, even for a valid key, from that IP only", async () => {
    const ip = "198.51.100.20";
    for (const res of [
      await from(ip, "/v1/moon", "Bearer alm_guess1"),
      await classify(ip, "Bearer alm_guess2"),
      await from(ip, "/v1/vat?code=DE", "Bearer alm_guess3"),
    ]) {
      expect(res.status).toBe(401);
      expect((await errorOf(res)).error.reason).toBe("INVALID");
    }
    const retry = await expectRateLimited(
      await from(ip, "/v1/moon", "Bearer alm_guess4"),
      "INVALID_KEY_LIMIT",
      "Too many requests with rejected API keys from this address (3 in 10 minutes); retry later.",
    );
    expect(retry).toBeLessThanOrEqual(600);
    expect((await classify(ip, `Bearer ${good}`)).status).toBe(429);
    // Calls without a key still go through (the demo tier decides them)...
    expect((await from(ip, "/v1/moon")).status).toBe(200);
    // ...and another IP with the valid key is served.
    expect((await classify("198.51.100.21", `Bearer ${good}`)).status).toBe(200);
  });

  it("a missing or malformed header is not a guess: it does not count", async () => {
    const ip = "198.51.100.30";
    for (let i = 0; i < 5; i++) expect((await classify(ip, "Basic abc")).status).toBe(401);
    expect((await classify(ip, `Bearer ${good}`)).status).toBe(200);
  });
});
