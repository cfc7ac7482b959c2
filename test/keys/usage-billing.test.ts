import { describe, expect, it } from "vitest";
import { MISSING_KEY_MESSAGE } from "../../src/http/key-auth.js";
import { accountApp, accountPage } from "../account/support.js";
import { FakeStripe } from "../fakes/stripe.js";
import { errorOf, testApp } from "../helpers/app.js";
import { runCli } from "../helpers/cli.js";
import { tempDir } from "../helpers/env.js";
import type { FormAgent } from "../support/form-agent.js";

const PUBLIC_URL = "http://localhost:8080";
const newKeyOf = (html: string) => /<code id="new-key"[^>]*>([^<]+)<\/code>/.exec(html)?.[1];

async function createKey(agent: FormAgent, name: string): Promise<string> {
  const { csrf } = await accountPage(agent);
  const res = await agent.post("/account/keys", { csrf, name, permission: "vibe.classify" });
  expect(res.status).toBe(303);
  return newKeyOf(await (await agent.follow(res, "/account/keys")).res.text()) ?? "";
}

describe("GET /v1/usage and the purchase webhook", () => {
  let stripe: FakeStripe;
  const acct = accountApp(PUBLIC_URL, {
    env: () => {
      stripe = new FakeStripe((path, init) => acct.t.app.request(path, init));
      return { STRIPE_WEBHOOK_SECRET: stripe.secret };
    },
  });
  const usage = (key?: string) =>
    acct.t.app.request("/v1/usage", key === undefined ? {} : { headers: { Authorization: `Bearer ${key}` } });
  const classify = (key: string) =>
    acct.t.app.request("/v1/vibe/classify", {
      method: "POST",
      headers: { "Content-Type": "application/json", Authorization: `Bearer ${key}` },
      body: '["nice"]',
    });

  it("a missing or invalid key is the spec's 401", async () => {
    const missing = await usage();
    expect(missing.status).toBe(401);
    const { error } = await errorOf(missing);
    expect(error).toMatchObject({ code: "unauthorized", message: MISSING_KEY_MESSAGE });
    expect(error.reason).toBeUndefined();
    const invalid = await usage("alm_notakey");
    expect(invalid.status).toBe(401);
    expect((await errorOf(invalid)).error).toMatchObject({
      code: "unauthorized",
      reason: "INVALID",
      message: "API key was rejected.",
    });
  });

  it("shows plan, limits, remaining uses and 24 h / 30 d counts, and spends nothing itself", async () => {
    const agent = await acct.signIn("usage@example.test");
    const key = await createKey(agent, "usage");
    for (let i = 0; i < 3; i++) expect((await classify(key)).status).toBe(200);
    for (let i = 0; i < 3; i++) expect((await usage(key)).status).toBe(200);
    const res = await usage(key);
    expect(res.status).toBe(200);
    const body = (await res.json()) as Record<string, unknown>;
    expect(body).toMatchObject({
      plan: "free",
      limits: { uses: 100, rate: { limit: 10, window_seconds: 60 }, max_active_keys: 2, new_keys_per_day: 3 },
      remaining_uses: 97,
      requests: { last_24h: 3, last_30d: 3 },
    });
    expect(body.rate).toMatchObject({ limit: 10 });
    // Not counted against the demo tier either: the RateLimit it carries is the key's (its account's).
    expect(res.headers.get("ratelimit-policy")).toMatch(/^"account";q=10;w=60$/);
  });

  it("the endpoint and its schema are in the OpenAPI document", async () => {
    const doc = (await (await acct.t.app.request("/v1/openapi.json")).json()) as {
      paths: Record<string, Record<string, unknown>>;
      webhooks: Record<string, Record<string, unknown>>;
      components: { schemas: Record<string, unknown> };
    };
    expect(doc.paths["/v1/usage"]?.get).toBeDefined();
    expect(doc.webhooks["/v1/billing/webhook"]?.post).toBeDefined();
    expect(doc.components.schemas.Usage).toBeDefined();
  });

  it("a wrongly signed webhook is 400 and grants nothing", async () => {
    const event = stripe.checkoutCompleted({ email: "thief@example.test", plan: "scale" });
    const res = await stripe.send("/v1/billing/webhook", event, "whsec_wrong");
    expect(res.status).toBe(400);
    expect((await errorOf(res)).error).toMatchObject({ code: "invalid_body", reason: "INVALID_SIGNATURE" });
    const unsigned = await acct.t.app.request("/v1/billing/webhook", { method: "POST", body: JSON.stringify(event) });
    expect(unsigned.status).toBe(400);
    expect(await acct.t.deps.keys.accounts.plans.planFor("thief@example.test")).toBe("free");
  });

  it("a signature dated beyond Stripe's tolerance (300 s) either way is 400; within it, accepted", async () => {
    const now = Math.floor(Date.now() / 1000);
    for (const [offset, status] of [
      [365 * 86_400, 400], // a year ahead
      [600, 400],
      [-600, 400],
      [-365 * 86_400, 400],
      [120, 200], // clock skew within the tolerance
      [-120, 200],
    ] as const) {
      const event = stripe.checkoutCompleted({ email: `dated${offset}@example.test`, plan: "pro" });
      const res = await stripe.send("/v1/billing/webhook", event, stripe.secret, now + offset);
      expect({ offset, status: res.status }).toEqual({ offset, status });
      if (status === 400) {
        expect((await errorOf(res)).error).toMatchObject({ code: "invalid_body", reason: "INVALID_SIGNATURE" });
      }
      const plan = await acct.t.deps.keys.accounts.plans.planFor(`dated${offset}@example.test`);
      expect({ offset, plan }).toEqual({ offset, plan: status === 200 ? "pro" : "free" });
    }
  });

  it("a paid Checkout grants the plan once; the account's keys get its limits at once", async () => {
    const agent = await acct.signIn("buyer@example.test");
    const key = await createKey(agent, "buyer");
    const event = stripe.checkoutCompleted({ email: "Buyer@Example.test", plan: "pro" });
    const res = await stripe.send("/v1/billing/webhook", event);
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ received: true, applied: true, plan: "pro" });
    const again = await stripe.send("/v1/billing/webhook", event);
    expect(await again.json()).toMatchObject({ applied: false, ignored: "event already applied" });

    const body = (await (await usage(key)).json()) as { plan: string; remaining_uses: number };
    expect(body).toMatchObject({ plan: "pro", remaining_uses: 100_000 });
    expect((await accountPage(agent)).html).toContain("Plan <strong>pro</strong>");
  });

  it("an unpaid session or one without a plan changes nothing (200, ignored)", async () => {
    for (const s of [{ paymentStatus: "unpaid", plan: "pro" }, { plan: "gold" }]) {
      const res = await stripe.send("/v1/billing/webhook", stripe.checkoutCompleted({ email: "x@example.test", ...s }));
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({ applied: false });
    }
    expect(await acct.t.deps.keys.accounts.plans.planFor("x@example.test")).toBe("free");
  });
});

describe("billing not configured", () => {
  it("POST /v1/billing/webhook is 503 unavailable without STRIPE_WEBHOOK_SECRET", async () => {
    const t = await testApp();
    try {
      const res = await new FakeStripe((p, i) => t.app.request(p, i)).send("/v1/billing/webhook", {
        id: "evt_1",
        type: "checkout.session.completed",
      });
      expect(res.status).toBe(503);
      expect((await errorOf(res)).error).toMatchObject({
        code: "unavailable",
        message: "Billing is not configured on this server.",
      });
    } finally {
      await t.close();
    }
  });
});

describe("almanac plans (operator CLI)", () => {
  it("grant, show and list", async () => {
    const env = { DATA_DIR: tempDir(), LOG_LEVEL: "silent" };
    const granted = await runCli(["plans", "grant", "Ada@Example.test", "scale"], env);
    expect(granted.code).toBe(0);
    expect(JSON.parse(granted.stdout)).toMatchObject({ email: "ada@example.test", plan: "scale", source: "cli" });
    const shown = await runCli(["plans", "show", "ada@example.test"], env);
    expect(JSON.parse(shown.stdout)).toMatchObject({ name: "scale", quota: null, maxActiveKeys: 50 });
    const listed = await runCli(["plans", "list"], env);
    expect(JSON.parse(listed.stdout)).toEqual([expect.objectContaining({ email: "ada@example.test", plan: "scale" })]);
    const bad = await runCli(["plans", "grant", "ada@example.test", "gold"], env);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain("unknown plan gold");
  });
});
