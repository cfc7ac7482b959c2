import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type TestApp, testApp } from "../helpers/app.js";
import { capturedLogger } from "../helpers/log-lines.js";

describe("client errors are not logged as errors", () => {
  const { logger, lines } = capturedLogger();
  let t: TestApp;
  beforeAll(async () => {
    t = await testApp({ DEMO_HOURLY_LIMIT: "4", INVALID_KEY_LIMIT: "1000" }, () => ({ logger }));
  });
  afterAll(() => t.close());

  it("400, 401, 404, 405, 413, 429 and a refused sign-in are logged below warn level", async () => {
    const json = { "Content-Type": "application/json" };
    const requests: [string, RequestInit?][] = [
      ["/v1/moon?lat=999"],
      ["/v1/vibe/classify", { method: "POST", headers: json, body: "[]" }],
      ["/v1/vibe/classify", { method: "POST", headers: { ...json, Authorization: "Bearer alm_nope" }, body: "[]" }],
      ["/v1/nope"],
      ["/v1/moon", { method: "DELETE" }],
      ["/v1/mail/contact", { method: "POST", headers: json, body: JSON.stringify(["x".repeat(400_000)]) }],
      ["/v1/moon"],
      ["/v1/moon"],
      ["/v1/moon"], // the fifth /v1 GET in the hour: 429
      ["/api/auth/sign-up/email", { method: "POST", headers: json, body: "{}" }],
    ];
    const statuses: number[] = [];
    for (const [path, init] of requests) statuses.push((await t.app.request(path, init)).status);
    await new Promise((r) => setImmediate(r));
    expect(new Set(statuses)).toEqual(new Set([400, 401, 404, 405, 413, 200, 429]));
    const noisy = lines.filter((l) => l.level >= 40);
    expect(noisy).toEqual([]);
    // Every request did get its one line.
    expect(lines.filter((l) => l.msg === "request").map((l) => l.status)).toEqual(statuses);
  });
});
