import { describe, expect, it } from "vitest";
import { capturedLogger } from "../helpers/log-lines.js";
import { FormAgent } from "../support/form-agent.js";
import { accountApp, accountPage, requestCode } from "./support.js";

/** The account page works on the host it was opened on. */
describe("sign-in without PUBLIC_URL, on whatever host the page was opened", () => {
  // The app believes it is http://localhost:8080 (the default); the browser opened 127.0.0.1.
  const acct = accountApp("http://localhost:8080", { env: () => ({ PUBLIC_URL: undefined, PORT: "8080" }) });
  const opened = "http://127.0.0.1:8080";

  it("sends a code and signs in from http://127.0.0.1:8080", async () => {
    const agent = new FormAgent(acct.t.app, opened);
    const code = await requestCode(agent, acct.smtp, "loopback@example.test");
    const verified = await agent.post("/account/verify", { email: "loopback@example.test", code });
    expect(verified.status).toBe(303);
    expect(verified.headers.get("location")).toBe("/account");
    const { html, csrf } = await accountPage(agent);
    expect(html).toContain("loopback@example.test");
    // Nothing points at localhost, which opens only on the server's own machine.
    const mail = acct.smtp.messages.at(-1);
    expect(mail?.text).toContain("Enter it on the sign-in page where you asked for it");
    expect(mail?.text).not.toContain("localhost");
    const created = await agent.post("/account/keys", { csrf, name: "here" });
    const keyPage = await (await agent.follow(created, "/account/keys")).res.text();
    const curl = /<code id="new-key-curl">([^<]+)<\/code>/.exec(keyPage)?.[1] ?? "";
    expect(curl).toMatch(/^curl (-X POST )?http:\/\/127\.0\.0\.1:8080\/v1\//);
    expect(keyPage).not.toContain("localhost:8080");
  });

  it("still refuses a form posted from another site to that host", async () => {
    const agent = new FormAgent(acct.t.app, opened);
    const res = await agent.post(
      "/account/sign-in",
      { email: "victim@example.test" },
      { Origin: "https://evil.example", "Sec-Fetch-Site": "cross-site", Accept: "application/json" },
    );
    expect(res.status).toBe(403);
    expect(((await res.json()) as { error: { reason: string } }).error.reason).toBe("CROSS_SITE");
  });

  it("refuses a form whose Origin names another host than the one it was sent to", async () => {
    const agent = new FormAgent(acct.t.app, opened);
    const res = await agent.post(
      "/account/sign-in",
      { email: "victim@example.test" },
      { Origin: "http://localhost:8080", "Sec-Fetch-Site": "same-site", Accept: "application/json" },
    );
    expect(res.status).toBe(403);
  });
});

describe("with PUBLIC_URL set, another host is sent to it first", () => {
  const acct = accountApp("https://almanac.example");

  it("redirects GET /account on 127.0.0.1 to PUBLIC_URL, keeping path and query", async () => {
    const res = await acct.t.app.request("http://127.0.0.1:8080/account?notice=x", {
      headers: { Host: "127.0.0.1:8080" },
    });
    expect(res.status).toBe(302);
    expect(res.headers.get("location")).toBe("https://almanac.example/account?notice=x");
  });

  it("does not redirect for a port alone (a proxy's Host may carry none, or its own)", async () => {
    for (const host of ["almanac.example", "almanac.example:8443"]) {
      const res = await acct.t.app.request(`http://${host}/account`, { headers: { Host: host } });
      expect(res.status).toBe(200);
    }
  });

  it("serves the page on PUBLIC_URL's own host", async () => {
    const res = await acct.t.app.request("https://almanac.example/account", { headers: { Host: "almanac.example" } });
    expect(res.status).toBe(200);
  });

  it("refuses a sign-in posted on another host (the form lives on PUBLIC_URL)", async () => {
    const agent = new FormAgent(acct.t.app, "http://127.0.0.1:8080");
    const res = await agent.post("/account/sign-in", { email: "a@example.test" }, { Accept: "application/json" });
    expect(res.status).toBe(403);
  });
});

describe("identity providers without PUBLIC_URL", () => {
  const github = { GITHUB_CLIENT_ID: "gh-client", GITHUB_CLIENT_SECRET: "gh-secret" };
  const acct = accountApp("http://localhost:8080", { env: () => ({ PUBLIC_URL: undefined, PORT: "8080", ...github }) });

  it("on another host: no provider button, the page and the log say PUBLIC_URL must be set, a start is refused", async () => {
    const { logger, lines } = capturedLogger();
    (acct.t.deps as { logger: typeof logger }).logger = logger;
    const agent = new FormAgent(acct.t.app, "http://192.0.2.10:8080");
    const page = await (await agent.get("/account")).text();
    expect(page).not.toContain("Sign in with GitHub");
    expect(page).toContain("works only at http://localhost:8080");
    expect(page).toContain("must set PUBLIC_URL");
    expect(lines.some((l) => l.level === 40 && l.msg.includes("set PUBLIC_URL"))).toBe(true);
    const start = await agent.post("/account/sign-in-with/github", {}, { Accept: "application/json" });
    expect(start.status).toBe(409);
    expect(((await start.json()) as { error: { message: string } }).error.message).toContain("PUBLIC_URL");
  });

  it("on the host the providers return to: the button, and copy that says a first sign-in makes an account", async () => {
    const page = await (await new FormAgent(acct.t.app, "http://localhost:8080").get("/account")).text();
    expect(page).toContain("Sign in with GitHub");
    expect(page).toContain("The first time, this makes an account");
    expect(page).not.toContain("must set PUBLIC_URL");
  });
});
