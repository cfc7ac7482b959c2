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

  it("a free key is created at Unkey with the plan's credits and ratelimit; usage and the cap work the same", async () => {
    const agent = await acct.signIn("unkey-free@example.test");
    const key = (await createKey(agent, "u1")) as string;
    const stored = [...unkey.keys.values()].find((k) => k.key === key);
    expect(stored).toMatchObject({ credits: 100, ratelimit: { limit: 10, duration: 60_000 } });
    for (let i = 0; i < 2; i++) expect((await call("/v1/vibe/classify", key, '["ok"]')).status).toBe(200);
    const usage = (await (await call("/v1/usage", key)).json()) as Record<string, unknown>;
    expect(usage).toMatchObject({ plan: "free", remaining_uses: 98, requests: { last_24h: 2, last_30d: 2 } });
    expect(stored?.credits).toBe(98); // /v1/usage spent no credit

    await createKey(agent, "u2");
    const third = (await createKey(agent, "u3")) as Response;
    expect(third.status).toBe(409);
    expect((await errorOf(third)).error.reason).toBe("KEY_LIMIT");

    // A plan grant updates the keys at Unkey.
    await acct.t.deps.accountKeys.grant("unkey-free@example.test", "pro", "cli");
    expect(stored).toMatchObject({ credits: 100_000, ratelimit: { limit: 120, duration: 60_000 } });
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
  });
});
