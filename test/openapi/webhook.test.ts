import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FakeStripe } from "../fakes/stripe.js";
import { type TestApp, testApp } from "../helpers/app.js";

/** A body Stripe could sign that is not an event is the sender's error (400), never a 500. */

const SECRET = "whsec_contract_0123456789abcdef";
let t: TestApp;
let stripe: FakeStripe;
beforeAll(async () => {
  t = await testApp({ STRIPE_WEBHOOK_SECRET: SECRET });
  stripe = new FakeStripe((p, i) => t.app.request(p, i), SECRET);
});
afterAll(() => t.close());

/** POSTs `payload` exactly, signed with the endpoint's secret. */
async function sendRaw(payload: string): Promise<Response> {
  const { default: Stripe } = await import("stripe");
  const signature = Stripe.webhooks.generateTestHeaderString({ payload, secret: SECRET });
  return t.app.request("/v1/billing/webhook", {
    method: "POST",
    headers: { "Content-Type": "application/json", "Stripe-Signature": signature },
    body: payload,
  });
}

describe("POST /v1/billing/webhook with a correctly signed body that is not an event", () => {
  it.each([
    "null",
    "[]",
    "42",
    '"evt"',
    "{}",
    '{"id":"evt_1","type":"checkout.session.completed"}',
    '{"id":1,"type":"x","data":{"object":{}}}',
  ])("%s → 400 invalid_body", async (payload) => {
    const res = await sendRaw(payload);
    expect(res.status).toBe(400);
    const body = (await res.json()) as { error: { code: string; message: string } };
    expect(body.error).toMatchObject({ code: "invalid_body", message: "The signed body is not a Stripe event." });
  });

  it("a real event still goes through (ignored for its type)", async () => {
    const res = await stripe.send("/v1/billing/webhook", {
      id: "evt_other",
      type: "invoice.paid",
      data: { object: {} },
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ received: true, applied: false });
  });
});
