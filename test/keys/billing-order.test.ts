import { describe, expect, it } from "vitest";
import { PLANS } from "../../src/features/keys/plans.js";
import { accountApp, accountPage } from "../account/support.js";
import { FakeStripe } from "../fakes/stripe.js";
import { DATABASE_URL } from "../helpers/env.js";

const PUBLIC_URL = "http://localhost:8080";
const newKeyOf = (html: string) => /<code id="new-key"[^>]*>([^<]+)<\/code>/.exec(html)?.[1];

/**
 * Stripe does not deliver events in order, and retries a failed delivery for days: a purchase
 * whose delivery failed (the server down) arrives after a later one. The plan in force is the
 * latest purchase's, not the last delivered.
 */
const setups: [string, boolean][] = [["SQLite", false]];
if (DATABASE_URL) setups.push(["PostgreSQL", true]);

describe.each(setups)("purchase events delivered out of order (%s)", (_name, postgres) => {
  let stripe: FakeStripe;
  const acct = accountApp(PUBLIC_URL, {
    postgres,
    env: () => {
      stripe = new FakeStripe((path, init) => acct.t.app.request(path, init));
      return { STRIPE_WEBHOOK_SECRET: stripe.secret };
    },
  });
  const usage = (key: string) => acct.t.app.request("/v1/usage", { headers: { Authorization: `Bearer ${key}` } });

  it("an older purchase delivered after a newer one changes nothing: the account stays on the newer plan", async () => {
    const agent = await acct.signIn("late@example.test");
    const { csrf } = await accountPage(agent);
    const made = await agent.post("/account/keys", { csrf, name: "late", permission: "vibe.classify" });
    const key = newKeyOf(await (await agent.follow(made, "/account/keys")).res.text()) ?? "";
    const now = Math.floor(Date.now() / 1000);
    const older = stripe.checkoutCompleted({ email: "late@example.test", plan: "scale", created: now - 3600 });
    const newer = stripe.checkoutCompleted({ email: "late@example.test", plan: "pro", created: now - 60 });
    expect(await (await stripe.send("/v1/billing/webhook", newer)).json()).toMatchObject({
      applied: true,
      plan: "pro",
    });
    const late = await stripe.send("/v1/billing/webhook", older);
    expect(late.status).toBe(200);
    expect(await late.json()).toEqual({ received: true, applied: false, ignored: "a later purchase is in force" });
    expect(await acct.t.deps.keys.accounts.plans.planFor("late@example.test")).toBe("pro");
    expect(await (await usage(key)).json()).toMatchObject({ plan: "pro", remaining_uses: 100_000 });
    // A purchase made after both applies as usual.
    const next = stripe.checkoutCompleted({ email: "late@example.test", plan: "scale" });
    expect(await (await stripe.send("/v1/billing/webhook", next)).json()).toMatchObject({
      applied: true,
      plan: "scale",
    });
  });
  it("the same event delivered 10 times at once is applied once", async () => {
    const event = stripe.checkoutCompleted({ email: "dup@example.test", plan: "pro" });
    const answers = (await Promise.all(
      Array.from({ length: 10 }, async () => (await stripe.send("/v1/billing/webhook", event)).json()),
    )) as { applied: boolean; ignored?: string }[];
    expect(answers.filter((a) => a.applied)).toHaveLength(1);
    expect(answers.filter((a) => a.ignored === "event already applied")).toHaveLength(9);
  });
  it("two purchases delivered at once: the account ends with the later one's plan, uses and rate limit", async () => {
    const now = Math.floor(Date.now() / 1000);
    const ends: unknown[] = [];
    for (let i = 0; i < 12; i++) {
      const email = `both${i}-${now}@example.test`;
      const agent = await acct.signIn(email);
      const { csrf } = await accountPage(agent);
      await agent.post("/account/keys", { csrf, name: "k", permission: "vibe.classify" });
      const [first, later] = i % 2 ? (["scale", "pro"] as const) : (["pro", "scale"] as const);
      const older = stripe.checkoutCompleted({ email, plan: first, created: now - 30 });
      const newer = stripe.checkoutCompleted({ email, plan: later, created: now - 10 });
      await Promise.all([stripe.send("/v1/billing/webhook", older), stripe.send("/v1/billing/webhook", newer)]);
      const ak = acct.t.deps.keys.accounts;
      const owner = (await ak.plans.userIdFor(email)) ?? "";
      ends.push({
        plan: await ak.plans.planFor(email),
        uses: await ak.quotas.remaining(await ak.poolOfAccount(owner, email)),
        ledger: [...new Set((await ak.ledger.forOwner(owner)).map((r) => r.plan))],
        later,
      });
    }
    const want = (later: "pro" | "scale") => ({ plan: later, uses: PLANS[later].quota, ledger: [later], later });
    expect(ends).toEqual(ends.map((e) => want((e as { later: "pro" | "scale" }).later)));
  });
});
