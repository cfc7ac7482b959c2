import { describe, expect, it } from "vitest";
import { errorOf, expectRateLimited } from "../helpers/app.js";
import { DATABASE_URL, skipReason } from "../helpers/env.js";
import type { FormAgent } from "../support/form-agent.js";
import { type AccountApp, accountApp, accountPage } from "./support.js";

const PUBLIC_URL = "http://localhost:8080";

const newKeyOf = (html: string) => /<code id="new-key"[^>]*>([^<]+)<\/code>/.exec(html)?.[1] ?? "";
const revokeLinksOf = (html: string) =>
  [...html.matchAll(/href="\/account\/keys\/([^/"]+)\/revoke"/g)].map((m) => m[1] ?? "");

/** The key shown once on the page after a PRG redirect: its plaintext and id. */
async function shownKey(acct: AccountApp, agent: FormAgent, res: Response, from: string) {
  expect(res.status).toBe(303);
  const key = newKeyOf(await (await agent.follow(res, from)).res.text());
  const info = (await acct.t.deps.keys.list(undefined)).find(
    (k) => k.prefix === key.slice(0, 8) && key.endsWith(k.last4),
  );
  return { key, id: info?.id ?? "" };
}

/** Creates a key on the page (PRG); returns its plaintext and id. */
async function createKey(acct: AccountApp, agent: FormAgent, name: string) {
  const { csrf } = await accountPage(agent);
  const res = await agent.post("/account/keys", { csrf, name, permissions_offered: "1", permission: "vibe.classify" });
  return shownKey(acct, agent, res, "/account/keys");
}

async function roll(agent: FormAgent, id: string, grace: string) {
  const { csrf } = await accountPage(agent);
  return agent.post(`/account/keys/${id}/roll`, { csrf, grace });
}

async function rollKey(acct: AccountApp, agent: FormAgent, id: string, grace: string) {
  return shownKey(acct, agent, await roll(agent, id, grace), "/account");
}

const call = (acct: AccountApp, key: string, path = "/v1/vibe/classify") =>
  acct.t.app.request(path, {
    method: path === "/v1/vibe/classify" ? "POST" : "GET",
    headers: { "Content-Type": "application/json", Authorization: `Bearer ${key}` },
    ...(path === "/v1/vibe/classify" && { body: JSON.stringify(["What a lovely day"]) }),
  });

const usesLeft = async (acct: AccountApp, key: string) =>
  ((await (await call(acct, key, "/v1/usage")).json()) as { remaining_uses: number | null }).remaining_uses;

/** Keys and quotas that cannot be gamed, over HTTP on the account page. */
function suite(acct: AccountApp) {
  it("a roll with a grace period leaves the replacement with the old key's own expiry (never), not the grace end", async () => {
    const agent = await acct.signIn("grace-expiry@example.test");
    const old = await createKey(acct, agent, "forever");
    const fresh = await rollKey(acct, agent, old.id, "3600");
    const keys = await acct.t.deps.keys.list(undefined);
    expect(keys.find((k) => k.id === fresh.id)?.expiresAt).toBeNull();
    expect(Date.parse(keys.find((k) => k.id === old.id)?.expiresAt ?? "")).toBeGreaterThan(Date.now());
  });

  it("the old and new key of a roll spend one count of uses; rolling again while the old key is in grace is 409", async () => {
    const agent = await acct.signIn("roll-share@example.test");
    const old = await createKey(acct, agent, "shared");
    expect((await call(acct, old.key)).status).toBe(200);
    const fresh = await rollKey(acct, agent, old.id, "604800");
    expect((await call(acct, old.key)).status).toBe(200); // grace: still works
    expect((await call(acct, fresh.key)).status).toBe(200);
    expect(await usesLeft(acct, old.key)).toBe(97);
    expect(await usesLeft(acct, fresh.key)).toBe(97);

    // The old key ends with its grace period: its expiry cannot be pushed out.
    const { csrf } = await accountPage(agent);
    const stretch = await agent.post(`/account/keys/${old.id}/update`, { csrf, expires: "never" });
    expect(stretch.status).toBe(409);
    expect((await errorOf(stretch)).error.reason).toBe("ROLLED");

    const again = await roll(agent, fresh.id, "604800");
    expect(again.status).toBe(409);
    expect((await errorOf(again)).error).toMatchObject({ code: "conflict", reason: "ROLL_IN_PROGRESS" });
    // A leak roll (no grace) in between does not open the way to another key in grace.
    const leak = await rollKey(acct, agent, fresh.id, "0");
    expect((await call(acct, fresh.key)).status).toBe(401);
    const third = await roll(agent, leak.id, "604800");
    expect(third.status).toBe(409);
    expect((await errorOf(third)).error.reason).toBe("ROLL_IN_PROGRESS");
    // Live keys: the old one in grace and the newest, never more.
    const live = (await acct.t.deps.keys.list(undefined)).filter((k) => k.name === "shared");
    expect(
      live
        .filter((k) => k.status === "active")
        .map((k) => k.id)
        .sort(),
    ).toEqual([old.id, leak.id].sort());
  });

  it("the free quota is the account's: create, spend, revoke, create again does not refill it", async () => {
    const agent = await acct.signIn("churn@example.test");
    const a = await createKey(acct, agent, "a");
    for (let i = 0; i < 3; i++) expect((await call(acct, a.key)).status).toBe(200);
    const { csrf } = await accountPage(agent);
    expect((await agent.post(`/account/keys/${a.id}/revoke`, { csrf })).status).toBe(303);
    const b = await createKey(acct, agent, "b");
    expect(await usesLeft(acct, b.key)).toBe(97);
    const c = await createKey(acct, agent, "c");
    expect((await call(acct, c.key)).status).toBe(200);
    expect(await usesLeft(acct, b.key)).toBe(96);
    expect((await accountPage(agent)).html).toContain("(96 uses left)");
  });

  it("the free rate limit is the account's: the 11th call in a minute over two keys is 429 RATE_LIMITED", async () => {
    const agent = await acct.signIn("rate-acct@example.test");
    const a = await createKey(acct, agent, "a");
    const b = await createKey(acct, agent, "b");
    for (let i = 0; i < 10; i++) expect((await call(acct, i % 2 ? a.key : b.key)).status).toBe(200);
    await expectRateLimited(await call(acct, a.key), "RATE_LIMITED", "API key was rejected.");
    await expectRateLimited(await call(acct, b.key), "RATE_LIMITED", "API key was rejected.");
  });

  it("a plan grant refills the account once, not each key in grace", async () => {
    const agent = await acct.signIn("grant-once@example.test");
    const old = await createKey(acct, agent, "k");
    const fresh = await rollKey(acct, agent, old.id, "86400");
    await acct.t.deps.keys.accounts.grant("grant-once@example.test", "pro", "cli");
    expect((await call(acct, old.key)).status).toBe(200);
    expect((await call(acct, fresh.key)).status).toBe(200);
    expect(await usesLeft(acct, fresh.key)).toBe(99_998);
  });

  it("a key in grace can be revoked on the page; revoking either key of a roll revokes both unless asked not to", async () => {
    const agent = await acct.signIn("pair@example.test");
    const old = await createKey(acct, agent, "pair");
    const fresh = await rollKey(acct, agent, old.id, "86400");
    let page = await accountPage(agent);
    expect(revokeLinksOf(page.html)).toEqual(expect.arrayContaining([old.id, fresh.id]));
    const info = (await acct.t.deps.keys.list(undefined)).filter((k) => k.name === "pair");
    const short = (id: string) => {
      const k = info.find((x) => x.id === id);
      return `${k?.prefix}…${k?.last4}`;
    };
    expect(page.html).toContain(`→ <code>${short(fresh.id)}</code>`); // old → new
    const confirm = await (await agent.get(`/account/keys/${fresh.id}/revoke`)).text();
    expect(confirm).toContain('name="only" value="0" checked');
    expect(confirm).toContain(short(old.id));

    expect((await agent.post(`/account/keys/${fresh.id}/revoke`, { csrf: page.csrf })).status).toBe(303);
    expect((await call(acct, fresh.key)).status).toBe(401);
    expect((await call(acct, old.key)).status).toBe(401);

    // `only=1`: the other key keeps working.
    const next = await createKey(acct, agent, "pair2");
    const next2 = await rollKey(acct, agent, next.id, "86400");
    page = await accountPage(agent);
    expect((await agent.post(`/account/keys/${next.id}/revoke`, { csrf: page.csrf, only: "1" })).status).toBe(303);
    expect((await call(acct, next.key)).status).toBe(401);
    expect((await call(acct, next2.key)).status).toBe(200);
  });

  it("revoking only the replacement gives the old key (still in grace) its place under the active-key cap back", async () => {
    const agent = await acct.signIn("orphan@example.test");
    const a = await createKey(acct, agent, "a");
    const b = await rollKey(acct, agent, a.id, "604800");
    await createKey(acct, agent, "c");
    const { csrf } = await accountPage(agent);
    expect((await agent.post(`/account/keys/${b.id}/revoke`, { csrf, only: "1" })).status).toBe(303);
    expect((await call(acct, a.key)).status).toBe(200);
    const d = await agent.post("/account/keys", { csrf, name: "d" });
    expect(d.status).toBe(409);
    expect((await errorOf(d)).error.reason).toBe("KEY_LIMIT");
  });

  it("a downgrade brings the account within the lower plan: newest keys over the cap revoked, uses lowered, said on the page", async () => {
    const email = "downgrade@example.test";
    const agent = await acct.signIn(email);
    await acct.t.deps.keys.accounts.grant(email, "pro", "cli");
    const made = [];
    for (const name of ["k1", "k2", "k3", "k4"]) made.push(await createKey(acct, agent, name));
    const result = await acct.t.deps.keys.accounts.grant(email, "free", "cli");
    expect(result.revokedKeys.map((k) => k.name).sort()).toEqual(["k3", "k4"]);
    expect(result.message).toContain("2 keys were over the free plan's cap and revoked, newest first");
    const [k1, k2, k3, k4] = made as [(typeof made)[0], (typeof made)[0], (typeof made)[0], (typeof made)[0]];
    expect((await call(acct, k1.key)).status).toBe(200);
    expect((await call(acct, k2.key)).status).toBe(200);
    expect((await call(acct, k3.key)).status).toBe(401);
    expect((await call(acct, k4.key)).status).toBe(401);
    expect(await usesLeft(acct, k1.key)).toBe(98);
    const page = await accountPage(agent);
    expect(page.html).toContain("Your plan changed to <strong>free</strong>, which allows 2 active keys");
    expect(page.html).toContain("2 keys were revoked, newest first (k4, k3)");
  });

  it("edits a key within the plan: name, expiry, permissions, own uses and rate limit; beyond the plan is 409 PLAN_LIMIT", async () => {
    const agent = await acct.signIn("edit@example.test");
    const k = await createKey(acct, agent, "before");
    const { csrf } = await accountPage(agent);
    const edit = (form: Record<string, string>) => agent.post(`/account/keys/${k.id}/update`, { csrf, ...form });
    const ok = await edit({ name: "after", expires: "30d", remaining: "5", ratelimit: "5/60" });
    expect(ok.status).toBe(303);
    expect(ok.headers.get("location")).toBe("/account?notice=updated");
    const info = (await acct.t.deps.keys.list(undefined)).find((x) => x.id === k.id);
    expect(info).toMatchObject({ name: "after", remaining: 5, ratelimit: { limit: 5, durationSec: 60 } });
    expect((Date.parse(info?.expiresAt ?? "") - Date.now()) / 86_400_000).toBeCloseTo(30, 0);
    expect(await usesLeft(acct, k.key)).toBe(5);

    const tooMany = await edit({ remaining: "101" });
    expect(tooMany.status).toBe(409);
    expect((await errorOf(tooMany)).error).toMatchObject({
      code: "conflict",
      reason: "PLAN_LIMIT",
      message: "The free plan allows 100 uses: choose less, or upgrade your plan.",
    });
    const tooFast = await edit({ ratelimit: "11/60" });
    expect(tooFast.status).toBe(409);
    expect((await errorOf(tooFast)).error.message).toBe(
      "The free plan allows 10 calls per 60 s: choose less, or upgrade your plan.",
    );
    expect((await edit({ ratelimit: "often" })).status).toBe(400);
    expect((await edit({ permissions_offered: "1", permission: "admin.everything" })).status).toBe(400);

    // Lookups only: classify is now 403.
    expect((await edit({ permissions_offered: "1" })).status).toBe(303);
    expect((await call(acct, k.key)).status).toBe(403);
    // Without the form token nothing changes.
    const forged = await agent.post(`/account/keys/${k.id}/update`, { name: "forged" });
    expect(forged.status).toBe(403);
    expect((await acct.t.deps.keys.list(undefined)).find((x) => x.id === k.id)?.name).toBe("after");
    // Someone else's key is 404.
    const other = await acct.signIn("edit-other@example.test");
    const theirs = await other.post(`/account/keys/${k.id}/update`, {
      csrf: (await accountPage(other)).csrf,
      name: "mine now",
    });
    expect(theirs.status).toBe(404);
  });
}

describe("keys and quotas that cannot be gamed (SQLite)", () => {
  suite(accountApp(PUBLIC_URL));
});

describe.skipIf(!DATABASE_URL)(
  `keys and quotas that cannot be gamed (PostgreSQL) ${skipReason({ postgres: true }) ?? ""}`,
  () => {
    suite(accountApp(PUBLIC_URL, { postgres: true }));
  },
);
