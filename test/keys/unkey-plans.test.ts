import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { accountApp, accountPage } from "../account/support.js";
import { FakeUnkey } from "../fakes/unkey.js";
import { errorOf } from "../helpers/app.js";
import type { FormAgent } from "../support/form-agent.js";

const PUBLIC_URL = "http://localhost:8080";
const newKeyOf = (html: string) => /<code id="new-key"[^>]*>([^<]+)<\/code>/.exec(html)?.[1] ?? "";
const keyIdsOf = (html: string) =>
  [...html.matchAll(/href="\/account\/keys\/([^/"]+)\/revoke"/g)].map((m) => m[1] ?? "");

describe("plans with the Unkey key store (credits and ratelimits at Unkey)", () => {
  const unkey = new FakeUnkey();
  beforeAll(async () => {
    await unkey.start();
  });
  afterAll(() => unkey.close());
  const acct = accountApp(PUBLIC_URL, {
    env: () => ({
      UNKEY_ROOT_KEY: unkey.rootKey,
      UNKEY_API_ID: unkey.apiId,
      UNKEY_BASE_URL: unkey.url,
    }),
  });

  async function createKey(agent: FormAgent, name: string) {
    const { csrf } = await accountPage(agent);
    const res = await agent.post("/account/keys", { csrf, name, permission: "vibe.classify" });
    return res.status === 303 ? newKeyOf(await (await agent.follow(res, "/account/keys")).res.text()) : res;
  }
  const call = (path: string, key: string, body?: string) =>
    acct.t.app.request(path, {
      method: body ? "POST" : "GET",
      headers: { Authorization: `Bearer ${key}`, "Content-Type": "application/json" },
      ...(body && { body }),
    });

  it("a free key at Unkey has no credits of its own: it spends its account's uses; usage and the cap work the same", async () => {
    const agent = await acct.signIn("unkey-free@example.test");
    const key = (await createKey(agent, "u1")) as string;
    // No credits or ratelimit of its own at Unkey: it spends its account's uses (in our database).
    const stored = [...unkey.keys.values()].find((k) => k.key === key);
    expect(stored).toMatchObject({ credits: null, ratelimit: undefined });
    for (let i = 0; i < 2; i++) expect((await call("/v1/vibe/classify", key, '["ok"]')).status).toBe(200);
    const usage = (await (await call("/v1/usage", key)).json()) as Record<string, unknown>;
    expect(usage).toMatchObject({ plan: "free", remaining_uses: 98, requests: { last_24h: 2, last_30d: 2 } });

    const second = (await createKey(agent, "u2")) as string;
    expect((await call("/v1/vibe/classify", second, '["ok"]')).status).toBe(200);
    expect(((await (await call("/v1/usage", key)).json()) as Record<string, unknown>).remaining_uses).toBe(97);
    const third = (await createKey(agent, "u3")) as Response;
    expect(third.status).toBe(409);
    expect((await errorOf(third)).error.reason).toBe("KEY_LIMIT");

    // A plan grant gives the account the plan's uses at once.
    await acct.t.deps.keys.accounts.grant("unkey-free@example.test", "pro", "cli");
    expect(((await (await call("/v1/usage", key)).json()) as Record<string, unknown>).remaining_uses).toBe(100_000);
  });

  it("roll with a grace period asks Unkey to expire the old key later (rerollKey expiration)", async () => {
    const agent = await acct.signIn("unkey-roll@example.test");
    const old = (await createKey(agent, "rolling")) as string;
    const [id] = keyIdsOf((await accountPage(agent)).html);
    const { csrf } = await accountPage(agent);
    const res = await agent.post(`/account/keys/${id}/roll`, { csrf, grace: "86400" });
    expect(res.status).toBe(303);
    const fresh = newKeyOf(await (await agent.follow(res, "/account")).res.text());
    expect(unkey.callsTo("/v2/keys.rerollKey").at(-1)?.body).toMatchObject({ keyId: id, expiration: 86_400_000 });
    expect((await call("/v1/vibe/classify", old, '["ok"]')).status).toBe(200);
    expect((await call("/v1/vibe/classify", fresh, '["ok"]')).status).toBe(200);
    // One count of uses for both; the replacement keeps the old key's own expiry (none).
    expect(((await (await call("/v1/usage", fresh)).json()) as Record<string, unknown>).remaining_uses).toBe(98);
    expect([...unkey.keys.values()].find((k) => k.key === fresh)?.expires).toBeUndefined();
  });

  it("revoking the replacement revokes the old key in grace too (keys.updateKey enabled: false on both)", async () => {
    const agent = await acct.signIn("unkey-pair@example.test");
    const old = (await createKey(agent, "pair")) as string;
    const [id] = keyIdsOf((await accountPage(agent)).html);
    const { csrf } = await accountPage(agent);
    const rolled = await agent.post(`/account/keys/${id}/roll`, { csrf, grace: "86400" });
    const fresh = newKeyOf(await (await agent.follow(rolled, "/account")).res.text());
    const freshId = [...unkey.keys.values()].find((k) => k.key === fresh)?.keyId;
    expect((await agent.post(`/account/keys/${freshId}/revoke`, { csrf })).status).toBe(303);
    expect((await call("/v1/vibe/classify", old, '["ok"]')).status).toBe(401);
    expect((await call("/v1/vibe/classify", fresh, '["ok"]')).status).toBe(401);
  });

  it("an edit goes to keys.updateKey in Unkey's v2 shape; beyond the plan is refused before Unkey is called", async () => {
    const agent = await acct.signIn("unkey-edit@example.test");
    await createKey(agent, "edit me");
    const [id] = keyIdsOf((await accountPage(agent)).html);
    const { csrf } = await accountPage(agent);
    const before = unkey.callsTo("/v2/keys.updateKey").length;
    const res = await agent.post(`/account/keys/${id}/update`, {
      csrf,
      name: "edited",
      expires: "never",
      remaining: "7",
      ratelimit: "2/60",
      permissions_offered: "1",
      permission: "vibe.classify",
    });
    expect(res.status).toBe(303);
    const sent = unkey.callsTo("/v2/keys.updateKey").slice(before);
    expect(sent.map((c) => c.body)).toEqual([
      {
        keyId: id,
        name: "edited",
        expires: null,
        permissions: ["vibe.classify"],
        credits: { remaining: 7 },
        ratelimits: [{ name: "requests", limit: 2, duration: 60_000, autoApply: true }],
      },
    ]);
    expect(unkey.keys.get(id ?? "")).toMatchObject({ name: "edited", credits: 7, ratelimit: { limit: 2 } });
    const refused = await agent.post(`/account/keys/${id}/update`, { csrf, remaining: "1000" });
    expect(refused.status).toBe(409);
    expect(unkey.callsTo("/v2/keys.updateKey").slice(before)).toHaveLength(1);
  });
});
