import { Hono } from "hono";
import { describe, expect, it } from "vitest";
import { DEFAULT_RETRY_AFTER_SEC, retryAfterOn429 } from "../../src/http/retry-after.js";
import { accountApp } from "../account/support.js";
import { errorOf } from "../helpers/app.js";

describe("every 429 carries Retry-After", () => {
  const app = new Hono();
  app.use(retryAfterOn429());
  app.get("/silent", (c) => c.text("slow down", 429));
  app.get("/better-auth", (c) => c.text("slow down", 429, { "X-Retry-After": "7" }));
  app.get("/own", (c) => c.text("slow down", 429, { "Retry-After": "3" }));
  app.get("/fetched", () => Response.json({}, { status: 429 })); // immutable headers
  app.get("/ok", (c) => c.text("fine"));

  it.each([
    ["/silent", String(DEFAULT_RETRY_AFTER_SEC)],
    ["/better-auth", "7"],
    ["/own", "3"],
    ["/fetched", String(DEFAULT_RETRY_AFTER_SEC)],
  ])("%s → Retry-After %s", async (path, expected) => {
    expect((await app.request(path)).headers.get("retry-after")).toBe(expected);
  });

  it("leaves other statuses alone", async () => {
    expect((await app.request("/ok")).headers.has("retry-after")).toBe(false);
  });
});

describe("better-auth's own limiter answers 429 with Retry-After through the app", () => {
  const acct = accountApp("http://localhost:8080", {
    env: () => ({ GITHUB_CLIENT_ID: "gh-id", GITHUB_CLIENT_SECRET: "gh-secret" }),
  });

  // Code requests and checks are counted by Almanac's own budgets (sign-in-limits.ts), which
  // set Retry-After themselves; starting a provider sign-in is still better-auth's to count.
  it("rapid provider sign-ins from one IP hit better-auth's window: 429 in the API's shape, with Retry-After", async () => {
    let limited: Response | undefined;
    for (let i = 0; i < 10 && !limited; i++) {
      const res = await acct.t.app.request(
        "/api/auth/sign-in/social",
        {
          method: "POST",
          headers: { "Content-Type": "application/json", Origin: "http://localhost:8080" },
          body: JSON.stringify({ provider: "github", callbackURL: "/account" }),
        },
        { incoming: { socket: { remoteAddress: "192.0.2.77" } } },
      );
      if (res.status === 429) limited = res;
    }
    expect(limited).toBeDefined();
    expect(Number(limited?.headers.get("retry-after"))).toBeGreaterThan(0);
    expect((await errorOf(limited as Response)).error.code).toBe("rate_limited");
  });
});
