import { randomBytes, randomInt } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { knownBrowserCookieName } from "../../src/features/account/known-browser.js";
import { SIGN_IN_LIMITS } from "../../src/features/account/sign-in-limits.js";
import { redisReady, type TestApp, testApp } from "../helpers/app.js";
import { DATABASE_URL, REDIS_URL, skipReason } from "../helpers/env.js";
import { FormAgent } from "../support/form-agent.js";
import { accountApp, codeFor, requestCode, signIn } from "./support.js";

const PUBLIC_URL = "http://localhost:8080";
const KNOWN = knownBrowserCookieName(PUBLIC_URL);
const AUTH_SECRET = randomBytes(32).toString("base64url");
const SEND = SIGN_IN_LIMITS.send;
const CHECK = SIGN_IN_LIMITS.check;

/** Addresses and client IPs no other test (or earlier run on a shared Redis) has used. */
const unique = (name: string) => `${name}-${randomBytes(4).toString("hex")}@example.test`;
const ip = () => `10.${randomInt(256)}.${randomInt(256)}.${randomInt(1, 255)}`;

/** The app as seen from one client IP (a browser, or one of an attacker's many machines). */
const fromIp = (t: TestApp, addr = ip()) => ({
  request: (input: string, init?: RequestInit) =>
    t.app.request(input, init, { incoming: { socket: { remoteAddress: addr } } }),
});

/**
 * Someone else spending an address's sign-in budget does not lock its owner out: a browser that
 * completed a sign-in for the address keeps a small reserve; no one else can use it.
 */
function reserveSuite(name: string, opts: { postgres: boolean; redis?: string }) {
  describe(name, () => {
    const acct = accountApp(PUBLIC_URL, {
      postgres: opts.postgres,
      env: () => ({ AUTH_SECRET, ...(opts.redis && { REDIS_URL: opts.redis }) }),
    });
    let instances: TestApp[] = [];
    /** Round-robin over the instances (one on SQLite, two sharing PostgreSQL and Redis otherwise). */
    let turn = 0;
    const next = () => instances[turn++ % instances.length] as TestApp;
    beforeAll(async () => {
      instances = [acct.t];
      if (opts.postgres) {
        const env = acct.t.config;
        instances.push(
          await testApp({
            MAIL_URL: acct.smtp.url,
            PUBLIC_URL,
            AUTH_SECRET,
            DATABASE_URL: env.DATABASE_URL,
            REDIS_URL: opts.redis,
          }),
        );
      }
      await redisReady(instances);
    });
    afterAll(() => Promise.all(instances.slice(1).map((t) => t.close())));

    /** The app as one browser on its own IP sees it, its requests going to the instances in turn. */
    const browserApp = () => {
      const addr = ip();
      return { request: (input: string, init?: RequestInit) => fromIp(next(), addr).request(input, init) };
    };
    const browser = () => new FormAgent(browserApp(), PUBLIC_URL);
    const signedIn = (email: string) => signIn(browserApp(), PUBLIC_URL, acct.smtp, email);
    /** better-auth's JSON route from a fresh IP each time (an attacker with many addresses). */
    const api = (path: string, body: unknown, cookie?: string) =>
      fromIp(next()).request(`/api/auth${path}`, {
        method: "POST",
        headers: { "Content-Type": "application/json", Origin: PUBLIC_URL, ...(cookie && { Cookie: cookie }) },
        body: JSON.stringify(body),
      });
    const askCode = (agent: FormAgent, email: string) => agent.post("/account/sign-in", { email });

    it("codes: an attacker spends the owner's budget; the owner's browser still gets a few, a forged or foreign cookie none", async () => {
      const owner = unique("owner");
      const victim = await signedIn(owner); // one code of the address's budget
      expect(victim.cookie(KNOWN)).toMatch(/^[\w-]{22}$/);
      const thief = await signedIn(unique("mallory")); // a genuine cookie, for another address

      // From many IPs, no cookie: the rest of the address's budget, then 429.
      const statuses: number[] = [];
      for (let i = 0; i < SEND.perAddress.points; i++) {
        statuses.push((await api("/email-otp/send-verification-otp", { email: owner, type: "sign-in" })).status);
      }
      expect(statuses).toEqual([...Array(SEND.perAddress.points - 1).fill(200), 429]);

      // No cookie, someone else's genuine cookie, a made-up one: still 429.
      const forged = browser();
      forged.setCookie(KNOWN, randomBytes(16).toString("base64url"));
      const garbled = browser();
      garbled.setCookie(KNOWN, encodeURIComponent("é".repeat(22)));
      const stranger = browser();
      stranger.setCookie(KNOWN, `${thief.cookie(KNOWN)}.${randomBytes(16).toString("base64url")}`);
      for (const agent of [browser(), thief, forged, garbled, stranger])
        expect((await askCode(agent, owner)).status).toBe(429);
      const viaApi = await api(
        "/email-otp/send-verification-otp",
        { email: owner, type: "sign-in" },
        `${KNOWN}=${thief.cookie(KNOWN)}`,
      );
      expect(viaApi.status).toBe(429);

      // The owner's browser: a code from its reserve, and it signs in with it.
      const code = await requestCode(victim, acct.smtp, owner);
      expect((await victim.post("/account/verify", { email: owner, code })).status).toBe(303);
      // The reserve is small and holds under a burst across instances: exactly what is left of it.
      const burst = await Promise.all(Array.from({ length: 12 }, () => askCode(victim, owner)));
      expect(burst.filter((r) => r.status === 303)).toHaveLength(SEND.knownBrowser.points - 1);
      expect(burst.filter((r) => r.status === 429)).toHaveLength(12 - (SEND.knownBrowser.points - 1));
    });

    it("checks: an attacker spends the owner's guesses; the owner's browser still signs in", async () => {
      const owner = unique("guessed");
      const victim = await signedIn(owner); // one check of the address's budget
      const statuses: number[] = [];
      for (let i = 0; i < CHECK.perAddress.points; i++) {
        statuses.push((await api("/sign-in/email-otp", { email: owner, otp: "000000" })).status);
      }
      expect(statuses.slice(0, -1).every((s) => s !== 429)).toBe(true);
      expect(statuses.at(-1)).toBe(429);
      const code = await requestCode(victim, acct.smtp, owner);
      // Anyone else checking the owner's code is refused before the code is looked at.
      expect((await browser().post("/account/verify", { email: owner, code })).status).toBe(429);
      expect((await victim.post("/account/verify", { email: owner, code })).status).toBe(303);
    });

    it("better-auth's JSON sign-in marks the browser too (HttpOnly, SameSite=Strict, Path=/)", async () => {
      const owner = unique("api");
      const before = acct.smtp.messages.length;
      expect((await api("/email-otp/send-verification-otp", { email: owner, type: "sign-in" })).status).toBe(200);
      const signedInRes = await api("/sign-in/email-otp", {
        email: owner,
        otp: await codeFor(acct.smtp, owner, before),
      });
      expect(signedInRes.status).toBe(200);
      const line = signedInRes.headers.getSetCookie().find((c) => c.startsWith(`${KNOWN}=`)) ?? "";
      expect(line).toMatch(/; Max-Age=\d+/);
      expect(line).toMatch(/; Path=\/(;|$)/);
      expect(line).toMatch(/; HttpOnly/);
      expect(line).toMatch(/; SameSite=Strict/);
      const cookie = line.split(";")[0] as string;
      for (let i = 0; i < SEND.perAddress.points - 1; i++) {
        await api("/email-otp/send-verification-otp", { email: owner, type: "sign-in" });
      }
      const send = () => api("/email-otp/send-verification-otp", { email: owner, type: "sign-in" }, cookie);
      expect((await api("/email-otp/send-verification-otp", { email: owner, type: "sign-in" })).status).toBe(429);
      expect((await send()).status).toBe(200);
    });
  });
}

reserveSuite("known browsers keep a sign-in reserve (SQLite, one instance)", { postgres: false });
describe.skipIf(!DATABASE_URL || !REDIS_URL)(
  `known browsers keep a sign-in reserve ${skipReason({ postgres: true, redis: true }) ?? ""}`,
  () => reserveSuite("PostgreSQL + Redis, two instances", { postgres: true, redis: REDIS_URL }),
);
