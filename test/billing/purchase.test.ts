import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { accountApp, accountPage, codeFor } from "../account/support.js";
import { FakeStripeServer } from "../fakes/stripe-server.js";
import { testApp } from "../helpers/app.js";
import type { FormAgent } from "../support/form-agent.js";

const PUBLIC_URL = "http://localhost:8080";
const text = (html: string) => html.replace(/<[^>]+>/g, " ").replace(/\s+/g, " ");

describe("plans without Stripe configured", () => {
  const acct = accountApp(PUBLIC_URL);

  it("/ and /account show the plans and say purchase is not configured, without a Buy button", async () => {
    const home = await (await acct.t.app.request("/")).text();
    expect(text(home)).toContain("Purchase is not configured on this server yet");
    expect(home).toContain('data-plan="pro"');
    expect(home).not.toContain("Buy pro");
    const agent = await acct.signIn("unconfigured@example.test");
    const { html, csrf } = await accountPage(agent);
    expect(text(html)).toContain("Purchase is not configured on this server yet");
    expect(html).not.toContain("Buy pro");
    const res = await agent.post("/account/billing/checkout", { csrf, plan: "pro" });
    expect(res.status).toBe(503);
  });
});

describe("buying, renewing and cancelling a plan through Stripe", () => {
  const stripe = new FakeStripeServer((path, init) => acct.t.app.request(path, init));
  // Started before accountApp's beforeAll reads the env (hooks run in order of registration).
  beforeAll(() => stripe.start());
  const acct = accountApp(PUBLIC_URL, {
    env: () => ({
      STRIPE_WEBHOOK_SECRET: stripe.signer.secret,
      STRIPE_SECRET_KEY: stripe.secretKey,
      STRIPE_PRICE_PRO: stripe.prices.pro,
      STRIPE_PRICE_SCALE: stripe.prices.scale,
      STRIPE_API_BASE: stripe.base,
    }),
  });
  afterAll(() => stripe.close());

  async function buy(agent: FormAgent, plan: string, hold = false) {
    const release = hold ? stripe.hold() : () => {};
    const { csrf } = await accountPage(agent);
    const res = await agent.post("/account/billing/checkout", { csrf, plan });
    expect(res.status).toBe(303);
    const to = res.headers.get("location") ?? "";
    expect(to).toMatch(new RegExp(`^${stripe.base}/checkout/cs_test_`));
    // The customer pays on the fake Checkout page: 303 back to success_url, then the webhooks.
    const paid = await fetch(`${to}/pay`, { method: "POST", redirect: "manual" });
    expect(paid.status).toBe(303);
    return { back: paid.headers.get("location") ?? "", release };
  }

  it("/ shows each paid plan's price from Stripe and a Buy button", async () => {
    const home = text(await (await acct.t.app.request("/")).text());
    expect(home).toContain("€19.00 a month");
    expect(home).toContain("€99.00 a month");
    expect(home).toContain("Buy pro");
    expect(home).not.toContain("not configured");
  });

  it("Buy creates a subscription-mode Checkout Session for the account, and the page waits for the webhook", async () => {
    const agent = await acct.signIn("buyer@example.test");
    const { back, release } = await buy(agent, "pro", true);
    const call = stripe.calls.find((c) => c.path === "/v1/checkout/sessions");
    expect(call?.body).toMatchObject({
      mode: "subscription",
      customer_email: "buyer@example.test",
      line_items: [{ price: stripe.prices.pro, quantity: "1" }],
      metadata: { plan: "pro" },
      success_url: `${PUBLIC_URL}/account?checkout=done&session={CHECKOUT_SESSION_ID}`,
      cancel_url: `${PUBLIC_URL}/account?checkout=cancelled#plans`,
    });
    expect(call?.body.client_reference_id).toMatch(/\w+/);
    expect(back).toMatch(/^http:\/\/localhost:8080\/account\?checkout=done&session=cs_test_/);

    // Before the webhook lands: "being confirmed", and the page asks again by itself.
    const pending = await (await agent.get(back)).text();
    expect(text(pending)).toContain("Stripe is confirming your purchase");
    expect(pending).toMatch(
      /<meta http-equiv="refresh" content="2;url=\/account\?checkout=done&amp;session=cs_test_\w+&amp;wait=1"/,
    );
    expect(pending).toContain('data-testid="plan-name">free<');

    release();
    await stripe.settled();
    expect(stripe.delivered.map((d) => [d.type, d.status])).toEqual([
      ["checkout.session.completed", 200],
      ["customer.subscription.created", 200],
      ["invoice.paid", 200],
    ]);
    const done = await (await agent.get(`${back}&wait=1`)).text();
    expect(done).not.toContain('http-equiv="refresh"');
    expect(text(done)).toContain("Your purchase is confirmed: you are on pro");
    expect(done).toContain('data-testid="plan-name">pro<');
    expect(text(done)).toMatch(/renews on \d{4}-\d{2}-\d{2}/);
    expect(text(done)).toMatch(/Last payment: €19\.00 on \d{4}-\d{2}-\d{2}/);
    expect(text(done)).toContain("100,000 uses");
  });

  it("a Buy while signed out carries the plan through sign-in and lands in Checkout; only a paid plan's name rides along", async () => {
    const email = "signed-out-buyer@example.test";
    const agent = acct.agent();
    // The home page's Buy button: GET /account?buy=pro, the sign-in page with the plan in its form.
    const home = await (await acct.t.app.request("/")).text();
    expect(home).toMatch(/<form method="get" action="\/account"[^>]*><input type="hidden" name="buy" value="pro"\/>/);
    const signIn = await (await agent.get("/account?buy=pro")).text();
    expect(signIn).toContain('<input type="hidden" name="buy" value="pro"/>');
    const before = acct.smtp.messages.length;
    expect((await agent.post("/account/sign-in", { email, buy: "pro" })).status).toBe(303);
    const code = await codeFor(acct.smtp, email, before);
    const verified = await agent.post("/account/verify", { email, code });
    expect(verified.status).toBe(303);
    const to = verified.headers.get("location") ?? "";
    expect(to).toMatch(new RegExp(`^${stripe.base}/checkout/cs_test_`));
    const call = stripe.calls.filter((c) => c.path === "/v1/checkout/sessions").at(-1);
    expect(call?.body).toMatchObject({ customer_email: email, metadata: { plan: "pro" } });
    // Signed in on the way: the account page is this account's.
    expect((await accountPage(agent)).html).toContain(email);

    // Anything but a paid plan's name is dropped: no foreign address, and free is not for sale.
    for (const buy of ["https://evil.example/", "//evil.example", "free", "pro/../../x"]) {
      const other = acct.agent();
      const page = await (await other.get(`/account?buy=${encodeURIComponent(buy)}`)).text();
      expect(page).not.toContain('name="buy"');
      const address = `not-${buy.length}@example.test`;
      const sent = acct.smtp.messages.length;
      expect((await other.post("/account/sign-in", { email: address, buy })).status).toBe(303);
      const back = await other.post("/account/verify", {
        email: address,
        code: await codeFor(acct.smtp, address, sent),
      });
      expect(back.headers.get("location")).toBe("/account");
    }
  });

  it("Manage billing opens the Customer Portal; cancelling there ends the plan at the period's end, then free", async () => {
    const agent = await acct.signIn("canceller@example.test");
    await buy(agent, "pro");
    await stripe.settled();
    const { csrf, html } = await accountPage(agent);
    expect(html).toContain("Manage billing");
    const res = await agent.post("/account/billing/portal", { csrf });
    expect(res.status).toBe(303);
    const portal = res.headers.get("location") ?? "";
    expect(portal).toMatch(new RegExp(`^${stripe.base}/portal/bps_test_`));
    const call = stripe.calls.findLast((c) => c.path === "/v1/billing_portal/sessions");
    expect(call?.body.return_url).toBe(`${PUBLIC_URL}/account`);
    const cancelled = await fetch(`${portal}/cancel`, { method: "POST", redirect: "manual" });
    expect(cancelled.headers.get("location")).toBe(`${PUBLIC_URL}/account`);
    const after = await accountPage(agent);
    expect(after.html).toContain('data-testid="plan-name">pro<');
    expect(text(after.html)).toMatch(/cancelled: ends on \d{4}-\d{2}-\d{2} , then free/);

    const sub = [...stripe.subscriptions.values()].find((s) => s.cancel_at_period_end);
    expect((await stripe.endPeriod(sub?.id ?? "")).status).toBe(200);
    const ended = await accountPage(agent);
    expect(ended.html).toContain('data-testid="plan-name">free<');
    expect(ended.html).toContain("Buy pro");
  });

  it("a renewal refills the period's uses to the plan's, never on top of what is left", async () => {
    const agent = await acct.signIn("renewer@example.test");
    await buy(agent, "pro");
    await stripe.settled();
    const { csrf } = await accountPage(agent);
    await agent.post("/account/keys", { csrf, name: "k", permission: "vibe.classify" });
    const page = await accountPage(agent);
    expect(text(page.html)).toContain("100,000 uses left");
    const sub = [...stripe.subscriptions.values()].at(-1);
    const res = await stripe.renew(sub?.id ?? "");
    expect(((await res.json()) as { applied: boolean }).applied).toBe(true);
    const renewed = text((await accountPage(agent)).html);
    expect(renewed).toContain("100,000 uses left");
    expect(renewed).not.toContain("200,000");
  });

  it("an upgrade applies at once; a downgrade when the paid period ends, with the renewal", async () => {
    const agent = await acct.signIn("changer@example.test");
    await buy(agent, "pro");
    await stripe.settled();
    const sub = [...stripe.subscriptions.values()].at(-1);
    if (!sub) throw new Error("no subscription");
    sub.price = stripe.prices.scale;
    const up = await stripe.event("customer.subscription.updated", stripe.subscriptionObject(sub));
    expect(await up.json()).toMatchObject({ applied: true, plan: "scale" });
    const upgraded = await accountPage(agent);
    expect(upgraded.html).toContain('data-testid="plan-name">scale<');
    expect(text(upgraded.html)).toContain("unlimited uses left");

    sub.price = stripe.prices.pro;
    const down = await stripe.event("customer.subscription.updated", stripe.subscriptionObject(sub));
    expect(await down.json()).toMatchObject({ applied: true, plan: "scale" });
    const pending = await accountPage(agent);
    expect(pending.html).toContain('data-testid="plan-name">scale<');
    expect(text(pending.html)).toMatch(/moves to pro on \d{4}-\d{2}-\d{2}/);

    expect((await stripe.renew(sub.id)).status).toBe(200);
    const renewed = await accountPage(agent);
    expect(renewed.html).toContain('data-testid="plan-name">pro<');
    expect(text(renewed.html)).toContain("100,000 uses left");
    expect(text(renewed.html)).not.toContain("moves to");
  });

  it("a late event older than the one applied changes nothing", async () => {
    const agent = await acct.signIn("late@example.test");
    await buy(agent, "pro");
    await stripe.settled();
    const sub = [...stripe.subscriptions.values()].at(-1);
    if (!sub) throw new Error("no subscription");
    const old = { ...sub, status: "canceled" };
    const res = await stripe.event("customer.subscription.deleted", stripe.subscriptionObject(old), sub.start - 60);
    expect(await res.json()).toMatchObject({ applied: false, ignored: "a later event is in force" });
    expect((await accountPage(agent)).html).toContain('data-testid="plan-name">pro<');
  });

  it("a failed renewal shows a notice and the plan stays", async () => {
    const agent = await acct.signIn("failing@example.test");
    await buy(agent, "pro");
    await stripe.settled();
    const sub = [...stripe.subscriptions.values()].at(-1);
    if (!sub) throw new Error("no subscription");
    await stripe.event("invoice.payment_failed", stripe.invoiceObject(sub, "subscription_cycle", false));
    const page = await accountPage(agent);
    expect(text(page.html)).toContain("Your last payment failed");
    expect(page.html).toContain('data-testid="plan-name">pro<');
  });

  it("Stripe down: Buy answers 502 and says nothing was charged", async () => {
    const agent = await acct.signIn("outage@example.test");
    const { csrf } = await accountPage(agent);
    stripe.failWith = 500;
    try {
      const res = await agent.post("/account/billing/checkout", { csrf, plan: "scale" }, { Accept: "text/html" });
      expect(res.status).toBe(502);
      expect(text(await res.text())).toContain("nothing was charged");
    } finally {
      stripe.failWith = null;
    }
  });
});

describe("configuration", () => {
  it("STRIPE_API_BASE defaults to Stripe's", async () => {
    const t = await testApp({});
    try {
      expect(t.deps.config.STRIPE_API_BASE).toBe("https://api.stripe.com");
      expect(t.deps.payments).toBeUndefined();
    } finally {
      await t.close();
    }
  });
});
