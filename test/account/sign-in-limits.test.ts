import { randomInt, randomUUID } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import { errorOf, type TestApp, testApp } from "../helpers/app.js";
import { DATABASE_URL, REDIS_URL, skipReason } from "../helpers/env.js";
import { FormAgent } from "../support/form-agent.js";
import type { SmtpTestServer } from "../support/smtp-server.js";
import { accountApp, accountInstances, codeFor } from "./support.js";

const PUBLIC_URL = "http://localhost:8080";

describe("sign-in codes are limited per address and per IP on every path", () => {
  const acct = accountApp(PUBLIC_URL);

  /** A JSON POST to better-auth's API from `ip`. */
  const api = (path: string, body: unknown, ip: string) =>
    acct.t.app.request(
      `/api/auth${path}`,
      {
        method: "POST",
        headers: { "Content-Type": "application/json", Origin: PUBLIC_URL },
        body: JSON.stringify(body),
      },
      { incoming: { socket: { remoteAddress: ip } } },
    );

  it("six IPs asking for codes to one address get 5 mailed, then 429 SIGN_IN_LIMIT with Retry-After", async () => {
    const email = "victim@example.test";
    const before = acct.smtp.messages.filter((m) => m.to.includes(email)).length;
    const statuses: number[] = [];
    for (let i = 0; i < 18; i++) {
      const res = await api("/email-otp/send-verification-otp", { email, type: "sign-in" }, `198.51.100.${i % 6}`);
      statuses.push(res.status);
      if (res.status === 429) {
        const { error } = await errorOf(res);
        expect(error).toMatchObject({
          code: "rate_limited",
          reason: "SIGN_IN_LIMIT",
          message: "Too many sign-in codes requested; retry later.",
        });
        expect(Number(res.headers.get("retry-after"))).toBeGreaterThan(0);
      }
    }
    expect(statuses.filter((s) => s === 200)).toHaveLength(5);
    expect(statuses.filter((s) => s === 429)).toHaveLength(13);
    await acct.smtp.waitForMessage(() => acct.smtp.messages.filter((m) => m.to.includes(email)).length >= before + 5);
    expect(acct.smtp.messages.filter((m) => m.to.includes(email)).length).toBe(before + 5);
    // The account page shares the address's budget.
    const page = await new FormAgent(acct.t.app, PUBLIC_URL).post("/account/sign-in", { email });
    expect(page.status).toBe(429);
    expect(Number(page.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(await page.text()).toMatch(/Too many sign-in attempts\. Try again in \d+ minutes?\./);
  });

  it("code checks for one address are capped at 15 an hour however many IPs guess", async () => {
    const email = "guessed@example.test";
    const statuses: number[] = [];
    for (let i = 0; i < 17; i++) {
      const res = await api("/sign-in/email-otp", { email, otp: "000000" }, `203.0.113.${i}`);
      statuses.push(res.status);
    }
    expect(statuses.slice(0, 15).every((s) => s !== 429)).toBe(true);
    expect(statuses.slice(15)).toEqual([429, 429]);
    // The page's code form spends the same budget.
    const page = await new FormAgent(acct.t.app, PUBLIC_URL).post("/account/verify", { email, code: "123456" });
    expect(page.status).toBe(429);
  });

  it.each([
    ["POST", "/api/auth/sign-up/email"],
    ["POST", "/api/auth/email-otp/verify-email"],
    ["POST", "/api/auth/forget-password/email-otp"],
    ["POST", "/api/auth/email-otp/check-verification-otp"],
    ["GET", "/api/auth/list-sessions"],
    ["GET", "/api/auth/ok"],
  ])("%s %s is not exposed: 404 not_found", async (method, path) => {
    const res = await acct.t.app.request(path, {
      method,
      headers: { "Content-Type": "application/json", Origin: PUBLIC_URL },
      ...(method === "POST" && { body: JSON.stringify({ email: "x@example.test", otp: "000000", type: "sign-in" }) }),
    });
    expect(res.status).toBe(404);
    expect((await errorOf(res)).error).toMatchObject({ code: "not_found", message: `No route for ${method} ${path}` });
  });

  it("the routes the product uses stay exposed", async () => {
    expect((await acct.t.app.request("/api/auth/get-session")).status).toBe(200);
  });
});

describe("starting a provider sign-in or link on the page is limited per IP", () => {
  const acct = accountApp(PUBLIC_URL, {
    env: () => ({ GITHUB_CLIENT_ID: "gh-id", GITHUB_CLIENT_SECRET: "gh-secret" }),
  });

  // The page calls better-auth in process, past its window (3 a 10 s on /api/auth/sign-in/social):
  // 50 starts from one client were 50 OAuth state rows.
  it("10 starts a minute from one IP, then 429 SIGN_IN_LIMIT with Retry-After; another IP is not affected", async () => {
    const from = (ip: string) =>
      acct.t.app.request(
        "/account/sign-in-with/github",
        { method: "POST", headers: { Origin: PUBLIC_URL, "Sec-Fetch-Site": "same-origin", Host: "localhost:8080" } },
        { incoming: { socket: { remoteAddress: ip } } },
      );
    const statuses: number[] = [];
    for (let i = 0; i < 12; i++) statuses.push((await from("198.51.100.200")).status);
    expect(statuses).toEqual([...Array(10).fill(303), 429, 429]);
    const refused = await from("198.51.100.200");
    expect((await errorOf(refused)).error).toMatchObject({ code: "rate_limited", reason: "SIGN_IN_LIMIT" });
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
    expect((await from("198.51.100.201")).status).toBe(303);
  });
});

describe("better-auth's own window (the other /api/auth routes) is each app's", () => {
  // It was one Map in better-auth's module: apps in one process (the test files sharing a worker,
  // isolate: false) spent each other's, so linking.test.ts and auth-log-levels.test.ts failed
  // when they ran together.
  it("an app spending its 3 tries a 10 s at /sign-in/social leaves another app's untouched", async () => {
    const env = { PUBLIC_URL, GITHUB_CLIENT_ID: "gh-id", GITHUB_CLIENT_SECRET: "gh-secret" };
    const [a, b] = [await testApp(env), await testApp(env)];
    try {
      const social = (t: TestApp) =>
        t.app.request(
          "/api/auth/sign-in/social",
          {
            method: "POST",
            headers: { "Content-Type": "application/json", Origin: PUBLIC_URL },
            body: JSON.stringify({ provider: "github", callbackURL: "/account" }),
          },
          { incoming: { socket: { remoteAddress: "192.0.2.77" } } },
        );
      const onA = [await social(a), await social(a), await social(a), await social(a)].map((r) => r.status);
      expect(onA).toEqual([200, 200, 200, 429]);
      expect((await social(b)).status).toBe(200);
    } finally {
      await a.close();
      await b.close();
    }
  });
});

describe("a mail lane that refuses or is down is an error, never 'code sent'", () => {
  const acct = accountApp(PUBLIC_URL);

  it("refused (550): the page answers 502 with a way back, the API 502 upstream_error", async () => {
    acct.smtp.setMode("reject");
    try {
      const page = await new FormAgent(acct.t.app, PUBLIC_URL).post("/account/sign-in", { email: "a@example.test" });
      expect(page.status).toBe(502);
      const html = await page.text();
      expect(html).toContain("We could not send the code right now. Try again later.");
      expect(html).toContain('action="/account/sign-in"');
      const res = await acct.t.app.request("/api/auth/email-otp/send-verification-otp", {
        method: "POST",
        headers: { "Content-Type": "application/json", Origin: PUBLIC_URL },
        body: JSON.stringify({ email: "b@example.test", type: "sign-in" }),
      });
      expect(res.status).toBe(502);
      expect((await errorOf(res)).error.code).toBe("upstream_error");
    } finally {
      acct.smtp.setMode("accept");
    }
  });

  it("down (connection dropped): the page answers 502", async () => {
    acct.smtp.setMode("drop");
    try {
      const page = await new FormAgent(acct.t.app, PUBLIC_URL).post("/account/sign-in", { email: "c@example.test" });
      expect(page.status).toBe(502);
      expect(await page.text()).not.toContain("on its way");
    } finally {
      acct.smtp.setMode("accept");
    }
  });
});

describe("a sign-in code dies after its 3 tries, however many arrive at once and on however many instances", () => {
  // SQLite is one process's database (several processes on one file are WEB_CONCURRENCY's case).
  const rigs = [
    { name: "one instance on SQLite", shared: false, instances: 1 },
    { name: "three instances on PostgreSQL + Redis", shared: true, instances: 3 },
  ];
  for (const rig of rigs) {
    const skip = rig.shared ? !DATABASE_URL || !REDIS_URL : false;
    describe.skipIf(skip)(
      `${rig.name} ${rig.shared ? (skipReason({ postgres: true, redis: true }) ?? "") : ""}`,
      () => {
        const { apps, smtp: mail } = accountInstances(PUBLIC_URL, rig.instances, rig.shared);
        let smtp: SmtpTestServer;
        beforeAll(() => {
          smtp = mail();
        });

        const api = (i: number, path: string, body: unknown) =>
          (apps[i % apps.length] as TestApp).app.request(
            `/api/auth${path}`,
            {
              method: "POST",
              headers: { "Content-Type": "application/json", Origin: PUBLIC_URL },
              body: JSON.stringify(body),
            },
            // A new client address each time: the per-IP budgets (shared through Redis) are not the subject.
            { incoming: { socket: { remoteAddress: `10.${randomInt(256)}.${randomInt(256)}.${randomInt(1, 255)}` } } },
          );
        const newCode = async (email: string) => {
          const before = smtp.messages.length;
          expect((await api(0, "/email-otp/send-verification-otp", { email, type: "sign-in" })).status).toBe(200);
          return codeFor(smtp, email, before);
        };
        const wrongFor = (code: string) => (code === "000000" ? "111111" : "000000");

        it("8 simultaneous wrong guesses spread over the instances, then the right code: refused, 5 trials of 5", async () => {
          for (let trial = 0; trial < 5; trial++) {
            const email = `burst-${trial}-${randomUUID()}@example.test`;
            const code = await newCode(email);
            const guesses = await Promise.all(
              Array.from({ length: 8 }, (_, i) => api(i, "/sign-in/email-otp", { email, otp: wrongFor(code) })),
            );
            expect(guesses.filter((r) => r.status === 200)).toHaveLength(0);
            const right = await api(trial, "/sign-in/email-otp", { email, otp: code });
            expect(right.status).toBe(403);
            expect((await errorOf(right)).error).toMatchObject({ code: "forbidden", reason: "TOO_MANY_ATTEMPTS" });
          }
        });

        it("2 wrong tries leave the right code working; a new code gets 3 tries of its own", async () => {
          const email = `slow-${randomUUID()}@example.test`;
          let code = await newCode(email);
          for (let i = 0; i < 3; i++) await api(i, "/sign-in/email-otp", { email, otp: wrongFor(code) });
          expect((await api(1, "/sign-in/email-otp", { email, otp: code })).status).toBe(403);
          code = await newCode(email);
          for (let i = 0; i < 2; i++) await api(i, "/sign-in/email-otp", { email, otp: wrongFor(code) });
          expect((await api(2, "/sign-in/email-otp", { email, otp: code })).status).toBe(200);
        });
      },
    );
  }
});
