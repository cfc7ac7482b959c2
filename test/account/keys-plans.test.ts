import { describe, expect, it } from "vitest";
import { errorOf, expectRateLimited } from "../helpers/app.js";
import { DATABASE_URL, skipReason } from "../helpers/env.js";
import type { FormAgent } from "../support/form-agent.js";
import { accountApp, accountPage } from "./support.js";

const PUBLIC_URL = "http://localhost:8080";

const newKeyOf = (html: string) => /<code id="new-key"[^>]*>([^<]+)<\/code>/.exec(html)?.[1];
const keyIdsOf = (html: string) =>
  [...html.matchAll(/href="\/account\/keys\/([^/"]+)\/revoke"/g)].map((m) => m[1] ?? "");

/** The create form as a browser sends it (permission box ticked unless `permission: "-"`). */
async function create(agent: FormAgent, form: Record<string, string>) {
  const { csrf } = await accountPage(agent);
  const fields = Object.fromEntries(
    Object.entries({ csrf, permissions_offered: "1", permission: "vibe.classify", ...form }).filter(
      ([, v]) => v !== "-",
    ),
  );
  return agent.post("/account/keys", fields);
}

/** Creates a key (PRG) and returns the plaintext shown on the page after the redirect. */
async function createKey(agent: FormAgent, form: Record<string, string>): Promise<string> {
  const res = await create(agent, form);
  expect(res.status).toBe(303);
  const page = await (await agent.follow(res, "/account/keys")).res.text();
  const key = newKeyOf(page);
  if (!key) throw new Error("no new key on the page");
  return key;
}

const classify = (app: { request: (u: string, i: RequestInit) => Response | Promise<Response> }, key: string) =>
  app.request("/v1/vibe/classify", {
    method: "POST",
    headers: { "Content-Type": "application/json", Authorization: `Bearer ${key}` },
    body: JSON.stringify(["What a lovely day"]),
  });

describe("keys under plans on the account page (embedded store)", () => {
  const acct = accountApp(PUBLIC_URL);

  it("Post/Redirect/Get: the key is shown once after the redirect, autofocused with a curl line; a reload creates nothing", async () => {
    const agent = await acct.signIn("prg@example.test");
    const res = await create(agent, { name: "prg" });
    expect(res.status).toBe(303);
    expect(res.headers.get("set-cookie")).toMatch(/almanac\.key_flash=[^;]+;.*HttpOnly/i);
    expect(res.headers.get("set-cookie")).not.toMatch(/alm_/); // encrypted, not the key itself
    const first = await (await agent.follow(res, "/account/keys")).res.text();
    const key = newKeyOf(first) ?? "";
    expect(key).toMatch(/^alm_/);
    expect(first).toMatch(/<code id="new-key"[^>]*autofocus/);
    expect(first).toContain(`curl -X POST ${PUBLIC_URL}/v1/vibe/classify -H &quot;Authorization: Bearer ${key}&quot;`);
    // Reload: the flash was read once; still one key.
    const reload = await accountPage(agent);
    expect(reload.html).not.toContain(key);
    expect(keyIdsOf(reload.html)).toHaveLength(1);
  });

  it("the flash cookie only opens for the session that made the key", async () => {
    const agent = await acct.signIn("flash-a@example.test");
    const res = await create(agent, { name: "flash" });
    const cookie = agent.cookie("almanac.key_flash") ?? "";
    expect(cookie).not.toBe("");
    const other = await acct.signIn("flash-b@example.test");
    other.setCookie("almanac.key_flash", cookie);
    const page = await accountPage(other);
    expect(page.html).not.toContain('id="new-key"');
    expect(newKeyOf(await (await agent.follow(res, "/account/keys")).res.text())).toMatch(/^alm_/);
  });

  it("a new key spends the free plan's 100 uses and 10 calls a minute of its account; classify and keyed GETs spend it", async () => {
    const agent = await acct.signIn("free@example.test");
    const key = await createKey(agent, { name: "free key" });
    // No limits of its own: it spends the account's 100 uses under the account's 10 calls a minute.
    const [info] = await acct.t.deps.keys.list(undefined).then((all) => all.filter((k) => k.name === "free key"));
    expect(info).toMatchObject({ remaining: null, ratelimit: null });
    expect((await accountPage(agent)).html).toContain("(100 uses left)");
    for (let i = 0; i < 5; i++) expect((await classify(acct.t.app, key)).status).toBe(200);
    for (let i = 0; i < 5; i++) {
      const get = await acct.t.app.request("/v1/moon?date=2026-01-01", { headers: { Authorization: `Bearer ${key}` } });
      expect(get.status).toBe(200);
    }
    // The 11th call in the minute: the key's limit, not a free pass past the demo tier.
    await expectRateLimited(await classify(acct.t.app, key), "RATE_LIMITED", "API key was rejected.");
    const get = await acct.t.app.request("/v1/moon", { headers: { Authorization: `Bearer ${key}` } });
    expect(get.status).toBe(429);
    const page = await accountPage(agent);
    expect(page.html).toMatch(
      /<dt>Calls 24 h<\/dt><dd class="num">10<\/dd><dt>Calls 30 d<\/dt><dd class="num">10<\/dd><dt>Remaining uses<\/dt><dd class="num">90<\/dd>/,
    );
    expect(page.html).toContain("Plan <strong>free</strong>");
    expect(page.html).toMatch(/<time datetime="[^"]+">\d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC<\/time>/);
  });

  it("caps: a duplicate name is 409 DUPLICATE_NAME, a third active key 409 KEY_LIMIT, a fourth creation a day 429", async () => {
    const agent = await acct.signIn("caps@example.test");
    await createKey(agent, { name: "one" });
    const dup = await create(agent, { name: "ONE" });
    expect(dup.status).toBe(409);
    expect((await errorOf(dup)).error).toMatchObject({ code: "conflict", reason: "DUPLICATE_NAME" });
    await createKey(agent, { name: "two" });
    const third = await create(agent, { name: "three" });
    expect(third.status).toBe(409);
    expect((await errorOf(third)).error).toMatchObject({
      code: "conflict",
      reason: "KEY_LIMIT",
      message: "The free plan allows 2 active keys: revoke one first, or upgrade your plan.",
    });
    // Revoking frees a slot; the name may be reused after a revoke.
    const page = await accountPage(agent);
    const [firstId] = keyIdsOf(page.html);
    const revoked = await agent.post(`/account/keys/${firstId}/revoke`, { csrf: page.csrf });
    expect(revoked.status).toBe(303);
    await createKey(agent, { name: "three" });
    await agent.post(`/account/keys/${keyIdsOf((await accountPage(agent)).html)[0]}/revoke`, {
      csrf: (await accountPage(agent)).csrf,
    });
    const fourth = await create(agent, { name: "four" });
    await expectRateLimited(
      fourth,
      "KEY_CREATION_LIMIT",
      "The free plan allows 3 new keys a day: try again later, or upgrade your plan.",
    );
  });

  it("concurrent creations never pass the cap (atomic)", async () => {
    const agent = await acct.signIn("race@example.test");
    const { csrf } = await accountPage(agent);
    const results = await Promise.all(
      ["a", "b", "c", "d", "e"].map((name) => agent.post("/account/keys", { name, csrf })),
    );
    expect(results.filter((r) => r.status === 303)).toHaveLength(2);
    expect(keyIdsOf((await accountPage(agent)).html)).toHaveLength(2);
  });

  it("roll and revoke ask first; a roll with a grace period keeps the old key working, without one it dies", async () => {
    const agent = await acct.signIn("roll@example.test");
    const old = await createKey(agent, { name: "rolling" });
    const [id] = keyIdsOf((await accountPage(agent)).html);
    for (const action of ["roll", "revoke"]) {
      const confirm = await agent.get(`/account/keys/${id}/${action}`);
      expect(confirm.status).toBe(200);
      const html = await confirm.text();
      expect(html).toContain(`action="/account/keys/${id}/${action}"`);
      expect(html).toContain("rolling");
    }
    expect((await classify(acct.t.app, old)).status).toBe(200); // viewing the confirmation changed nothing

    const { csrf } = await accountPage(agent);
    const rolled = await agent.post(`/account/keys/${id}/roll`, { csrf, grace: "3600" });
    expect(rolled.status).toBe(303);
    const fresh = newKeyOf(await (await agent.follow(rolled, "/account")).res.text()) ?? "";
    expect(fresh).toMatch(/^alm_/);
    expect((await classify(acct.t.app, old)).status).toBe(200); // grace: still works
    expect((await classify(acct.t.app, fresh)).status).toBe(200);
    // A second submit of the same roll issues nothing.
    const again = await agent.post(`/account/keys/${id}/roll`, { csrf, grace: "3600" });
    expect(again.status).toBe(404);

    const [freshId] = keyIdsOf((await accountPage(agent)).html);
    const leak = await agent.post(`/account/keys/${freshId}/roll`, { csrf, grace: "0" });
    const third = newKeyOf(await (await agent.follow(leak, "/account")).res.text()) ?? "";
    expect((await classify(acct.t.app, fresh)).status).toBe(401);
    expect((await classify(acct.t.app, third)).status).toBe(200);
  });

  it("expiry and permissions are chosen at creation: a lookups-only key is 403 on classify", async () => {
    const agent = await acct.signIn("perm@example.test");
    const key = await createKey(agent, { name: "lookups", expires: "7d", permission: "-" });
    const res = await classify(acct.t.app, key);
    expect(res.status).toBe(403);
    expect((await errorOf(res)).error.code).toBe("forbidden");
    const [info] = await acct.t.deps.keys.list(undefined).then((all) => all.filter((k) => k.name === "lookups"));
    const days = (Date.parse(info?.expiresAt ?? "") - Date.now()) / 86_400_000;
    expect(days).toBeGreaterThan(6.9);
    expect(days).toBeLessThan(7.1);
    const bad = await create(agent, { name: "x", expires: "forever" });
    expect(bad.status).toBe(400);
  });
});

describe.skipIf(!DATABASE_URL)(`key caps on PostgreSQL ${skipReason({ postgres: true }) ?? ""}`, () => {
  const acct = accountApp(PUBLIC_URL, { postgres: true });

  it("concurrent creations never pass the cap (row lock), and a duplicate name is refused", async () => {
    const agent = await acct.signIn("pg-race@example.test");
    const { csrf } = await accountPage(agent);
    const results = await Promise.all(
      ["a", "b", "c", "d", "e", "a"].map((name) =>
        agent.post("/account/keys", { name, csrf, permission: "vibe.classify" }),
      ),
    );
    expect(results.filter((r) => r.status === 303)).toHaveLength(2);
    expect(results.every((r) => r.status === 303 || r.status === 409)).toBe(true);
    expect(keyIdsOf((await accountPage(agent)).html)).toHaveLength(2);
  });
});
