import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type TestApp, testApp } from "../helpers/app.js";
import { capturedLogger } from "../helpers/log-lines.js";

const PUBLIC_URL = "http://localhost:8080";
const json = { "Content-Type": "application/json" };

describe("better-auth's own log lines: client faults below warn, server faults at error", () => {
  const { logger, lines } = capturedLogger();
  let t: TestApp;
  beforeAll(async () => {
    t = await testApp({ PUBLIC_URL, GITHUB_CLIENT_ID: "gh-id", GITHUB_CLIENT_SECRET: "gh-secret" }, () => ({ logger }));
  });
  afterAll(() => t.close());
  const authLines = () => lines.filter((l) => l.lib === "better-auth");

  it("a foreign callbackURL, a foreign origin, an unknown provider, no OAuth state and a 415 are logged at info at most", async () => {
    const socialWith = (body: object, headers: Record<string, string> = {}) =>
      t.app.request("/api/auth/sign-in/social", {
        method: "POST",
        headers: { ...json, ...headers },
        body: JSON.stringify(body),
      });
    const answers = [
      await socialWith({ provider: "github", callbackURL: "https://evil.example/x" }),
      await socialWith({ provider: "github" }, { Cookie: "theirs=1", Origin: "https://evil.example" }),
      await socialWith({ provider: "nope" }),
      await t.app.request("/api/auth/callback/github?code=abc"),
      await t.app.request("/api/auth/callback/github?code=abc&state=forged"),
      await t.app.request("/api/auth/sign-out", {
        method: "POST",
        headers: { "Content-Type": "text/plain" },
        body: "x",
      }),
    ];
    expect(answers.map((a) => a.status)).toEqual([403, 403, 404, 302, 302, 400]);
    await new Promise((r) => setImmediate(r));
    const said = authLines().map((l) => l.msg);
    // better-auth did report each one (so the test sees the lines it means to).
    for (const m of [
      /^Invalid callbackURL: https:\/\/evil/,
      /^Invalid origin: https:\/\/evil/,
      /^Provider not found/,
      /^State not found$/,
      /^Failed to parse state$/,
    ]) {
      expect(said.some((s) => m.test(s))).toBe(true);
    }
    expect(lines.filter((l) => l.level >= 40)).toEqual([]);
  });

  it("a server fault (the state store gone) is still logged at error", async () => {
    lines.length = 0;
    await sql`DROP TABLE auth_verification`.execute(t.deps.database.db);
    const res = await t.app.request("/api/auth/callback/github?code=abc&state=forged");
    expect(res.status).toBe(302);
    await new Promise((r) => setImmediate(r));
    expect(
      authLines()
        .filter((l) => l.level >= 50)
        .map((l) => l.msg),
    ).toEqual(["Failed to parse state"]);
  });
});
