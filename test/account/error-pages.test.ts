import { describe, expect, it } from "vitest";
import { errorOf } from "../helpers/app.js";
import { accountApp } from "./support.js";

const PUBLIC_URL = "http://localhost:8080";
const HTML = { Accept: "text/html,application/xhtml+xml,*/*;q=0.8" };

describe("account errors are HTML pages with a way back for browsers", () => {
  const acct = accountApp(PUBLIC_URL);

  it("an unknown /account path: 404 page with links back", async () => {
    const res = await acct.t.app.request("/account/nope", { headers: HTML });
    expect(res.status).toBe(404);
    expect(res.headers.get("content-type")).toMatch(/^text\/html/);
    const html = await res.text();
    expect(html).toContain("No route for GET /account/nope");
    expect(html).toContain('href="/account"');
    expect(html).toContain(res.headers.get("x-request-id"));
  });

  it("a stale session posting a key form: 401 page, not JSON", async () => {
    const res = await acct.agent().post("/account/keys", { name: "x", csrf: "stale" }, HTML);
    expect(res.status).toBe(401);
    const html = await res.text();
    expect(html).toContain("Sign in on the account page first.");
    expect(html).toContain("Back to your account");
  });

  it("a wrong method: 405 page keeping Allow", async () => {
    const res = await acct.t.app.request("/account/sign-in", { method: "GET", headers: HTML });
    expect(res.status).toBe(405);
    expect(res.headers.get("allow")).toContain("POST");
    expect(await res.text()).toContain("Back to your account");
  });

  it("429 says how long to wait", async () => {
    const agent = acct.agent();
    let last: Response | undefined;
    for (let i = 0; i < 6; i++) last = await agent.post("/account/sign-in", { email: "wait@example.test" }, HTML);
    expect(last?.status).toBe(429);
    expect(Number(last?.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(await last?.text()).toMatch(/Try again in \d+ minutes?\./);
  });

  it("API clients asking for JSON keep the error shape", async () => {
    const res = await acct.t.app.request("/account/nope", { headers: { Accept: "application/json" } });
    expect(res.status).toBe(404);
    expect((await errorOf(res)).error.code).toBe("not_found");
  });
});
