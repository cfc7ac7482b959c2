import { randomInt, randomUUID } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import type { TestApp } from "../helpers/app.js";
import { DATABASE_URL, REDIS_URL, skipReason } from "../helpers/env.js";
import { FormAgent } from "../support/form-agent.js";
import type { SmtpTestServer } from "../support/smtp-server.js";
import { accountInstances, accountPage, codeFor, signIn } from "./support.js";

const PUBLIC_URL = "http://localhost:8080";

/**
 * Bursts split over two instances on one PostgreSQL and one Redis: each budget and each one-time
 * thing holds exactly, however the requests are spread (the sequential and one-instance cases are
 * sign-in-limits.test.ts's and keys-plans.test.ts's).
 */
describe.skipIf(!DATABASE_URL || !REDIS_URL)(
  `sign-in and keys under bursts over two instances ${skipReason({ postgres: true, redis: true }) ?? ""}`,
  () => {
    const { apps, smtp: mail } = accountInstances(PUBLIC_URL, 2, true);
    let smtp: SmtpTestServer;
    beforeAll(() => {
      smtp = mail();
    });

    const randomIp = () => `10.${randomInt(256)}.${randomInt(256)}.${randomInt(1, 255)}`;
    const api = (i: number, path: string, body: unknown, ip = randomIp()) =>
      (apps[i % 2] as TestApp).app.request(
        `/api/auth${path}`,
        {
          method: "POST",
          headers: { "Content-Type": "application/json", Origin: PUBLIC_URL },
          body: JSON.stringify(body),
        },
        { incoming: { socket: { remoteAddress: ip } } },
      );
    /** A load balancer stand-in: each request goes to the next instance. */
    let turn = 0;
    const balanced = {
      request: (url: string, init?: RequestInit) => (apps[turn++ % 2] as TestApp).app.request(url, init),
    };

    it("12 code requests for one address at once from 12 IPs: exactly 5 are mailed", async () => {
      const email = `burst-send-${randomUUID()}@example.test`;
      const res = await Promise.all(
        Array.from({ length: 12 }, (_, i) => api(i, "/email-otp/send-verification-otp", { email, type: "sign-in" })),
      );
      expect(res.map((r) => r.status).sort()).toEqual([...Array(5).fill(200), ...Array(7).fill(429)]);
      await smtp.waitForMessage(() => smtp.messages.filter((m) => m.to.includes(email)).length >= 5);
      await new Promise((r) => setTimeout(r, 300));
      expect(smtp.messages.filter((m) => m.to.includes(email))).toHaveLength(5);
    });

    // better-auth's own per-process window (3 a minute per IP) refused most of these, after they had
    // spent the shared budget, with a 429 without SIGN_IN_LIMIT or Retry-After.
    it("25 code requests from one IP for 25 addresses at once: exactly 20 are sent", async () => {
      const ip = randomIp();
      const res = await Promise.all(
        Array.from({ length: 25 }, (_, i) =>
          api(
            i,
            "/email-otp/send-verification-otp",
            { email: `ip-${i}-${randomUUID()}@example.test`, type: "sign-in" },
            ip,
          ),
        ),
      );
      expect(res.map((r) => r.status).sort()).toEqual([...Array(20).fill(200), ...Array(5).fill(429)]);
    });

    it("20 code checks for one address at once from 20 IPs, and 70 from one IP: exactly 15 and 60 get through", async () => {
      const email = `burst-check-${randomUUID()}@example.test`;
      const byAddress = await Promise.all(
        Array.from({ length: 20 }, (_, i) => api(i, "/sign-in/email-otp", { email, otp: "000000" })),
      );
      expect(byAddress.filter((r) => r.status === 429)).toHaveLength(5);
      const ip = randomIp();
      const byIp = await Promise.all(
        Array.from({ length: 70 }, (_, i) =>
          api(i, "/sign-in/email-otp", { email: `check-${i}-${randomUUID()}@example.test`, otp: "000000" }, ip),
        ),
      );
      expect(byIp.filter((r) => r.status === 429)).toHaveLength(10);
      expect([...byAddress, ...byIp].every((r) => r.status === 400 || r.status === 403 || r.status === 429)).toBe(true);
    });

    it("the right code sent 3 times at once (its tries) over both instances signs in once; 6 at once, never twice", async () => {
      for (const [n, sessions] of [
        [3, [1]],
        [6, [0, 1]], // the tries beyond the code's 3 delete it, maybe before the right one reads it
      ] as const) {
        const email = `burst-code-${n}-${randomUUID()}@example.test`;
        const before = smtp.messages.length;
        expect((await api(0, "/email-otp/send-verification-otp", { email, type: "sign-in" })).status).toBe(200);
        const code = await codeFor(smtp, email, before);
        const res = await Promise.all(
          Array.from({ length: n }, (_, i) => api(i, "/sign-in/email-otp", { email, otp: code })),
        );
        expect(sessions).toContain(res.filter((r) => r.status === 200).length);
        expect(res.every((r) => r.status === 200 || r.status === 400 || r.status === 403)).toBe(true);
        // …and the used code stays used.
        expect((await api(1, "/sign-in/email-otp", { email, otp: code })).status).not.toBe(200);
      }
    });

    it("20 key creations at once over both instances: exactly the plan's 2 active keys", async () => {
      const agent = await signIn(balanced, PUBLIC_URL, smtp, `burst-keys-${randomUUID()}@example.test`);
      const { csrf } = await accountPage(agent);
      const res = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          agent.post("/account/keys", { name: `k${i}`, csrf, permission: "vibe.classify" }),
        ),
      );
      expect(res.filter((r) => r.status === 303)).toHaveLength(2);
      expect(res.every((r) => r.status < 500)).toBe(true);
      const html = (await accountPage(agent)).html;
      expect([...html.matchAll(/href="\/account\/keys\/([^/"]+)\/revoke"/g)]).toHaveLength(2);
    });

    it("a code guessed on the page while the API uses it: one session", async () => {
      const email = `burst-mixed-${randomUUID()}@example.test`;
      const agent = new FormAgent(balanced, PUBLIC_URL);
      const before = smtp.messages.length;
      expect((await agent.post("/account/sign-in", { email })).status).toBe(303);
      const code = await codeFor(smtp, email, before);
      const [page, json] = await Promise.all([
        agent.post("/account/verify", { email, code }),
        api(1, "/sign-in/email-otp", { email, otp: code }),
      ]);
      const signedIn = [
        page.headers.getSetCookie().some((c) => c.includes("session_token=") && !c.includes("Max-Age=0")),
        json.status === 200,
      ];
      expect(signedIn.filter(Boolean)).toHaveLength(1);
      expect([page.status, json.status].every((s) => s < 500)).toBe(true);
    });
  },
);
