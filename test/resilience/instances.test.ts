import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sessionCookieName } from "../../src/features/account/auth.js";
import { REJECTED_KEY_MESSAGE } from "../../src/http/key-auth.js";
import { accountPage, signIn } from "../account/support.js";
import { runCli } from "../helpers/cli.js";
import { DATABASE_URL, freshPostgresUrl, REDIS_URL, skipReason, tempDir } from "../helpers/env.js";
import { type ServerProcess, spawnServer, stop } from "../helpers/process.js";
import {
  type Answer,
  authSecret,
  call,
  classify,
  clearDemoCounter,
  createKey,
  redisFallbacks,
  uniqueLoopback,
  verdicts,
} from "../scale/support.js";
import { type SmtpTestServer, startSmtpServer } from "../support/smtp-server.js";

const DEMO_LIMIT = 6;
/** tsx compiles the sources at start: on a loaded machine that takes a while. */
const SLOW_START = { startTimeoutMs: 60_000 };
const PUBLIC_URL = "http://localhost:8080"; // the load balancer's address, the same for both instances
const SESSION_COOKIE = sessionCookieName(PUBLIC_URL);
const DEMO_PATH = "/v1/holidays?country=GB&year=2024";

const repeat = (n: number, v: string) => Array.from({ length: n }, () => v);
const newKeyOf = (html: string) => /<code id="new-key"[^>]*>([^<]+)<\/code>/.exec(html)?.[1];
const keyIdsOf = (html: string) => [...html.matchAll(/href="\/account\/keys\/([^/"]+)\/revoke"/g)].map((m) => m[1]);

// Real `almanac serve` processes and CLI runs (tsx): slow to start on a busy machine.
describe.skipIf(!DATABASE_URL || !REDIS_URL)(
  `two instances sharing PostgreSQL and Redis ${skipReason({ postgres: true, redis: true }) ?? ""}`,
  { timeout: 120_000 },
  () => {
    let pg: { url: string; drop: () => Promise<void> };
    let smtp: SmtpTestServer;
    let a: ServerProcess;
    let b: ServerProcess;
    let cliEnv: Record<string, string>;

    beforeAll(async () => {
      pg = await freshPostgresUrl();
      smtp = await startSmtpServer();
      const shared = {
        DATABASE_URL: pg.url,
        REDIS_URL: REDIS_URL as string,
        AUTH_SECRET: authSecret(),
        MAIL_URL: smtp.url,
        PUBLIC_URL,
        DEMO_HOURLY_LIMIT: String(DEMO_LIMIT),
      };
      cliEnv = { DATABASE_URL: pg.url, DATA_DIR: tempDir() };
      // Started together, as a deployment does: both migrate the same fresh schema at once.
      const started = await Promise.allSettled([
        spawnServer({ ...shared, DATA_DIR: tempDir() }, SLOW_START),
        spawnServer({ ...shared, DATA_DIR: tempDir() }, SLOW_START),
      ]);
      const value = (r: PromiseSettledResult<ServerProcess>) => (r.status === "fulfilled" ? r.value : undefined);
      a = value(started[0]) as ServerProcess;
      b = value(started[1]) as ServerProcess;
      const failed = started.find((r) => r.status === "rejected");
      if (failed) throw failed.reason;
    }, 120_000);

    afterAll(async () => {
      await Promise.all([stop(a), stop(b)]);
      await smtp?.close();
      await pg?.drop();
    });

    /** Calls `send` n times, alternating between the instances (A, B, A, …), one at a time. */
    async function alternate(n: number, send: (base: string) => Promise<Answer>): Promise<Answer[]> {
      const answers: Answer[] = [];
      for (let i = 0; i < n; i++) answers.push(await send(i % 2 === 0 ? a.url : b.url));
      return answers;
    }

    it(`the demo tier counts ${DEMO_LIMIT} calls in total across both, then 429 DEMO_HOURLY_LIMIT on each`, async () => {
      const ip = uniqueLoopback();
      await clearDemoCounter(REDIS_URL as string, ip);
      const answers = await alternate(DEMO_LIMIT * 2, (base) => call(base, DEMO_PATH, { localAddress: ip }));
      expect(verdicts(answers), await redisFallbacks(a.url, b.url)).toEqual([
        ...repeat(DEMO_LIMIT, "200"),
        ...repeat(DEMO_LIMIT, "429 DEMO_HOURLY_LIMIT"),
      ]);
      // One counter: what one instance reports remaining continues on the other.
      expect(answers.slice(0, DEMO_LIMIT).map((r) => r.headers.ratelimit)).toEqual(
        Array.from({ length: DEMO_LIMIT }, (_, i) => expect.stringMatching(`^"demo";r=${DEMO_LIMIT - 1 - i};t=\\d+$`)),
      );
      const refused = answers[DEMO_LIMIT];
      expect(refused?.body.error).toMatchObject({
        code: "rate_limited",
        message: `Demo tier limit of ${DEMO_LIMIT} calls per hour reached; retry later or send an API key.`,
      });
      expect(Number(refused?.headers["retry-after"])).toBeGreaterThan(0);
      await clearDemoCounter(REDIS_URL as string, ip);
    });

    it("a key's remaining uses are shared: 10 of 30 alternating calls succeed, then 429 USAGE_EXCEEDED", async () => {
      const key = await createKey(cliEnv, "--remaining", "10");
      const answers = await alternate(30, (base) => classify(base, key.key));
      expect(verdicts(answers)).toEqual([...repeat(10, "200"), ...repeat(20, "429 USAGE_EXCEEDED")]);
      expect(answers[10]?.body.error?.message).toBe("API key was rejected.");
      const listed = await runCli(["keys", "list"], cliEnv);
      expect(JSON.parse(listed.stdout).find((k: { id: string }) => k.id === key.id)).toMatchObject({ remaining: 0 });
    });

    it("a key's rate limit is shared: 3 of 8 alternating calls succeed, then 429 RATE_LIMITED", async () => {
      const key = await createKey(cliEnv, "--ratelimit", "3/60");
      const answers = await alternate(8, (base) => classify(base, key.key));
      expect(verdicts(answers), await redisFallbacks(a.url, b.url)).toEqual([
        ...repeat(3, "200"),
        ...repeat(5, "429 RATE_LIMITED"),
      ]);
      expect(answers[3]?.body.error?.message).toBe("API key was rejected.");
      expect(Number(answers[3]?.headers["retry-after"])).toBeGreaterThan(0);
    });

    it("a key revoked with the CLI is refused by both instances on the very next call", async () => {
      const key = await createKey(cliEnv);
      expect(verdicts([await classify(a.url, key.key), await classify(b.url, key.key)])).toEqual(["200", "200"]);
      const revoked = await runCli(["keys", "revoke", key.id], cliEnv);
      expect(JSON.parse(revoked.stdout)).toEqual({ id: key.id, revoked: true });
      for (const base of [b.url, a.url]) {
        const res = await classify(base, key.key);
        expect(res.status).toBe(401);
        expect(res.body.error).toMatchObject({
          code: "unauthorized",
          reason: "INVALID",
          message: REJECTED_KEY_MESSAGE,
        });
      }
    });

    it("signed in on A, the session works on B; a key made on B and revoked on A is refused by B; sign-out holds", async () => {
      const target = { base: "" };
      // The agent addresses the load balancer (PUBLIC_URL, sent as Host); this stands in for it.
      const http = {
        request: (url: string, init?: RequestInit) => {
          const { pathname, search } = new URL(url, PUBLIC_URL);
          // The balancer's host name reaches the instance (as nginx's `Host $host` passes it).
          const base = target.base.replace("127.0.0.1", new URL(PUBLIC_URL).hostname);
          return fetch(new URL(pathname + search, base), { ...init, redirect: "manual" });
        },
      };
      const email = `scale-${Date.now()}@example.test`;

      target.base = a.url;
      const agent = await signIn(http, PUBLIC_URL, smtp, email);

      target.base = b.url;
      const onB = await accountPage(agent);
      expect(onB.html).toContain("Your account");
      expect(onB.html).toContain(email);
      const session = (await (await agent.get("/api/auth/get-session")).json()) as { user?: { email: string } };
      expect(session.user?.email).toBe(email);
      const created = await agent.post("/account/keys", { name: "made on B", csrf: onB.csrf });
      expect(created.status).toBe(303); // Post/Redirect/Get: the key is on the page after the redirect
      const key = newKeyOf(await (await agent.follow(created, "/account/keys")).res.text()) as string;
      expect(key).toMatch(/^alm_/);
      expect((await classify(a.url, key)).status).toBe(200);

      target.base = a.url;
      const onA = await accountPage(agent);
      const [id] = keyIdsOf(onA.html);
      expect(id).toBeDefined();
      expect((await agent.post(`/account/keys/${id}/revoke`, { csrf: onA.csrf })).status).toBe(303);
      const refused = await classify(b.url, key);
      expect(refused.status).toBe(401);
      expect(refused.body.error).toMatchObject({ code: "unauthorized", reason: "INVALID" });

      // Sign-out on A ends the session on B too (sessions live in PostgreSQL, not in the process).
      const { csrf } = await accountPage(agent);
      const token = agent.cookie(SESSION_COOKIE) as string;
      expect(token).toBeTruthy();
      expect((await agent.post("/account/sign-out", { csrf })).status).toBe(303);
      agent.setCookie(SESSION_COOKIE, token); // a stolen copy of the cookie: refused server-side
      target.base = b.url;
      const after = await (await agent.get("/account")).text();
      expect(after).toContain("<h1>Sign in</h1>");
      expect(after).not.toContain(email);
    });
  },
);
