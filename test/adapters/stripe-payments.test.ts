import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createStripePayments } from "../../src/adapters/stripe-payments.js";
import { FakeStripeServer } from "../fakes/stripe-server.js";

describe("Stripe payments through the official package, against the fake", () => {
  const stripe = new FakeStripeServer(() => new Response(null, { status: 500 }));
  beforeAll(() => stripe.start());
  afterAll(() => stripe.close());
  const payments = () =>
    createStripePayments({ secretKey: stripe.secretKey, apiBase: stripe.base, prices: stripe.prices, timeoutMs: 5000 });

  it("reads a plan's price once and shows it from memory", async () => {
    const p = payments();
    expect(await p.price(stripe.prices.pro)).toEqual({
      amount: 1900,
      currency: "eur",
      interval: "month",
      intervalCount: 1,
    });
    const before = stripe.calls.length;
    await p.price(stripe.prices.pro);
    expect(stripe.calls.length).toBe(before);
  });

  it("Stripe down: a failed price read is remembered, so the plans pages do not ask on every view", async () => {
    const p = payments();
    stripe.failWith = 500;
    try {
      await expect(p.price(stripe.prices.scale)).rejects.toThrow();
      const before = stripe.calls.length;
      await expect(p.price(stripe.prices.scale)).rejects.toThrow();
      expect(stripe.calls.length).toBe(before);
    } finally {
      stripe.failWith = null;
    }
  });
});
