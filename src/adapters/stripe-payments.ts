import Stripe from "stripe";
import type { CheckoutRequest, Payments, PlanPrice } from "../ports/payments.js";

export interface StripeSettings {
  secretKey: string;
  /** STRIPE_API_BASE: `https://api.stripe.com`, or a local fake. */
  apiBase: string;
  prices: Record<string, string>;
  timeoutMs: number;
}

/** How long a price read from Stripe is shown before it is read again. */
const PRICE_TTL_MS = 10 * 60_000;
/** How long reading a price may take, and how long a failed read is remembered. */
const PRICE_TIMEOUT_MS = 2000;
const PRICE_RETRY_MS = 60_000;

/** Payments through the official `stripe` package (Checkout Sessions, Customer Portal, prices). */
export function createStripePayments(s: StripeSettings, now: () => number = Date.now): Payments {
  const base = new URL(s.apiBase);
  const stripe = new Stripe(s.secretKey, {
    host: base.hostname,
    port: base.port || (base.protocol === "http:" ? 80 : 443),
    protocol: base.protocol === "http:" ? "http" : "https",
    timeout: s.timeoutMs,
    maxNetworkRetries: 1,
    telemetry: false,
  });
  const priceCache = new Map<string, { at: number; price: Promise<PlanPrice> }>();

  return {
    prices: s.prices,

    async checkout(req: CheckoutRequest) {
      const metadata = { plan: req.plan, account_id: req.accountId };
      const session = await stripe.checkout.sessions.create({
        mode: "subscription",
        line_items: [{ price: req.price, quantity: 1 }],
        client_reference_id: req.accountId,
        ...(req.customer ? { customer: req.customer } : { customer_email: req.email }),
        success_url: req.successUrl,
        cancel_url: req.cancelUrl,
        metadata,
        subscription_data: { metadata },
      });
      if (!session.url) throw new Error("Stripe answered a Checkout Session without a url");
      return { id: session.id, url: session.url };
    },

    async portal(req) {
      const session = await stripe.billingPortal.sessions.create({
        customer: req.customer,
        return_url: req.returnUrl,
      });
      return { url: session.url };
    },

    price(id: string) {
      const cached = priceCache.get(id);
      if (cached && now() - cached.at < PRICE_TTL_MS) return cached.price;
      // Shown on every page with the plans: a slow Stripe costs them at most this, and a failure
      // (the plans then show no price) is remembered like a price, so pages do not wait on each view.
      const price = stripe.prices.retrieve(id, {}, { timeout: PRICE_TIMEOUT_MS, maxNetworkRetries: 0 }).then((p) => ({
        amount: p.unit_amount ?? 0,
        currency: p.currency,
        interval: p.recurring?.interval ?? "month",
        intervalCount: p.recurring?.interval_count ?? 1,
      }));
      priceCache.set(id, { at: now(), price });
      price.catch(() => priceCache.set(id, { at: now() - PRICE_TTL_MS + PRICE_RETRY_MS, price }));
      return price;
    },
  };
}
