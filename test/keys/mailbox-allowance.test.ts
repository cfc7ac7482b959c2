import { randomUUID } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import { accountInstances, accountPage, signIn } from "../account/support.js";
import type { TestApp } from "../helpers/app.js";
import { DATABASE_URL, REDIS_URL, skipReason } from "../helpers/env.js";
import type { FormAgent } from "../support/form-agent.js";
import type { SmtpTestServer } from "../support/smtp-server.js";

const PUBLIC_URL = "http://localhost:8080";

const newKeyOf = (html: string) => /<code id="new-key"[^>]*>([^<]+)<\/code>/.exec(html)?.[1] ?? "";

/** A load balancer stand-in over `apps`: each request goes to the next instance. */
function balanced(apps: TestApp[]) {
  let turn = 0;
  return {
    request: (url: string, init?: RequestInit) => (apps[turn++ % apps.length] as TestApp).app.request(url, init),
  };
}

/** Creates a key on the account page (PRG) and returns its plaintext. */
async function createKey(agent: FormAgent, name: string): Promise<Response | string> {
  const { csrf } = await accountPage(agent);
  const res = await agent.post("/account/keys", { csrf, name, permissions_offered: "1", permission: "vibe.classify" });
  if (res.status !== 303) return res;
  return newKeyOf(await (await agent.follow(res, "/account/keys")).res.text());
}

async function keyOf(agent: FormAgent, name: string): Promise<string> {
  const key = await createKey(agent, name);
  if (typeof key !== "string") throw new Error(`key not created: ${key.status}`);
  expect(key).toMatch(/^alm_/);
  return key;
}

/**
 * The free allowance is one per mailbox, over HTTP, on `apps` (one instance on SQLite, or two on
 * one PostgreSQL and one Redis): sub-addresses and, at Gmail, dotted spellings of one mailbox are
 * separate accounts that share one allowance, under a burst of calls and when they sign up at once.
 */
async function oneAllowancePerMailbox(apps: TestApp[], smtp: SmtpTestServer) {
  const lb = balanced(apps);
  const call = (key: string, path = "/v1/vibe/classify") =>
    lb.request(path, {
      method: path === "/v1/vibe/classify" ? "POST" : "GET",
      headers: { "Content-Type": "application/json", Authorization: `Bearer ${key}` },
      ...(path === "/v1/vibe/classify" && { body: JSON.stringify(["What a lovely day"]) }),
    });
  const usesLeft = async (key: string) =>
    ((await (await call(key, "/v1/usage")).json()) as { remaining_uses: number | null }).remaining_uses;
  const stamp = randomUUID().slice(0, 8);
  const db = (apps[0] as TestApp).deps.database.db;

  // Two accounts of one Gmail mailbox: a +tag, dots, and googlemail.com.
  const first = `jo.doe.${stamp}+one@gmail.com`;
  const a = await keyOf(await signIn(lb, PUBLIC_URL, smtp, first), "a");
  const b = await keyOf(await signIn(lb, PUBLIC_URL, smtp, `jodoe${stamp}+two@googlemail.com`), "b");
  expect((await call(a)).status).toBe(200);
  expect((await call(b)).status).toBe(200);
  // One allowance: the second account sees both calls spent. (Every request, /v1/usage too,
  // takes a point of the free plan's rate limit, 10 a minute, which is the mailbox's as well.)
  expect(await usesLeft(b)).toBe(98);

  // A burst over both accounts' keys with 5 uses left (set on every allowance there is): 5 served.
  await db.updateTable("account_quotas").set({ remaining: 5 }).execute();
  const burst = await Promise.all(Array.from({ length: 30 }, (_, i) => call(i % 2 ? a : b)));
  const reasons = await Promise.all(
    burst.map(async (r) =>
      r.status === 200 ? "200" : ((await r.json()) as { error: { reason: string } }).error.reason,
    ),
  );
  expect(reasons.filter((r) => r === "200")).toHaveLength(5);
  expect(new Set(reasons.filter((r) => r !== "200"))).toEqual(new Set(["USAGE_EXCEEDED"]));
  expect(await usesLeft(a)).toBe(0);

  // Another mailbox has its own (outside Gmail the dots count: jodoe@ is not jo.doe@).
  const other = await keyOf(await signIn(lb, PUBLIC_URL, smtp, `jodoe.${stamp}@example.test`), "c");
  expect((await call(other)).status).toBe(200);
  expect(await usesLeft(other)).toBe(99);

  // A paid plan is the account's own: the first account buys pro; the second stays on the spent allowance.
  await (apps[0] as TestApp).deps.keys.accounts.grant(first, "pro", "cli");
  expect((await call(a)).status).toBe(200);
  expect(await usesLeft(a)).toBe(99_999);
  expect((await call(b)).status).toBe(429);

  // Three addresses of one mailbox sign up and make their keys at once: one allowance among them.
  const agents = await Promise.all(
    ["+1", "+2", ""].map((tag) => signIn(lb, PUBLIC_URL, smtp, `race.${stamp}${tag}@example.test`)),
  );
  const keys = await Promise.all(agents.map((agent, i) => keyOf(agent, `r${i}`)));
  const calls = await Promise.all(keys.map((k) => call(k)));
  expect(calls.map((r) => r.status)).toEqual([200, 200, 200]);
  for (const k of keys) expect(await usesLeft(k)).toBe(97);
  // The account page says so too.
  expect((await accountPage(agents[0] as FormAgent)).html).toContain("(97 uses left)");
}

describe("one free allowance per mailbox", () => {
  describe("SQLite, one instance", () => {
    const { apps, smtp } = accountInstances(PUBLIC_URL, 1, false);
    it("sub-addresses and Gmail's dotted spellings share one allowance; a paid plan is the account's", async () => {
      await oneAllowancePerMailbox(apps, smtp());
    });
  });

  describe.skipIf(!DATABASE_URL || !REDIS_URL)(
    `two instances on one PostgreSQL and one Redis ${skipReason({ postgres: true, redis: true }) ?? ""}`,
    () => {
      const { apps, smtp } = accountInstances(PUBLIC_URL, 2, true);
      let mail: SmtpTestServer;
      beforeAll(() => {
        mail = smtp();
      });
      it("the same, with every request balanced over both instances", async () => {
        await oneAllowancePerMailbox(apps, mail);
      });
    },
  );
});
