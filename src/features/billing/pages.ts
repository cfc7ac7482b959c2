import type { OpenAPIHono } from "@hono/zod-openapi";
import type { Context } from "hono";
import { ApiError } from "../../http/errors.js";
import type { AppEnv } from "../../http/types.js";
import type { Payments } from "../../ports/payments.js";
import { isPlanName } from "../keys/index.js";
import type { SubscriptionStore } from "./subscriptions.js";

/** What the account feature lends the billing pages: its guard (same origin, session, CSRF) and origin. */
export interface AccountHooks {
  guard(c: Context<AppEnv>): Promise<{ s: { user: { id: string; email: string } }; body: Record<string, unknown> }>;
  /** The origin the person opened the page on, or PUBLIC_URL when it is set. */
  origin(c: Context<AppEnv>): string;
}

const NOT_CONFIGURED = "Purchase is not configured on this server yet: the operator can grant a plan meanwhile.";
const STRIPE_DOWN = "Stripe could not be reached, so nothing was charged. Try again in a minute.";

const seeOther = (location: string) => new Response(null, { status: 303, headers: { Location: location } });

/** What a checkout needs: Stripe, the account's subscription, a log. */
export interface CheckoutDeps {
  payments?: Payments;
  store: SubscriptionStore;
  logger: { warn(o: object, m: string): void };
}

/**
 * Where a Buy of `plan` by `user` goes: a new Stripe Checkout Session in subscription mode, or,
 * for a subscriber, Stripe's Customer Portal (one subscription per account). Throws the ApiError
 * the page shows when purchase is not configured, the plan is not for sale, or Stripe is down.
 * `origin`: the page's, where Stripe sends the person back.
 */
export async function checkoutLocation(
  deps: CheckoutDeps,
  user: { id: string; email: string },
  plan: unknown,
  origin: string,
): Promise<string> {
  const payments = deps.payments;
  if (!payments) throw new ApiError("unavailable", NOT_CONFIGURED);
  const price = isPlanName(plan) ? payments.prices[plan] : undefined;
  if (!price) throw new ApiError("invalid_body", "Choose pro or scale.");
  const row = await deps.store.get(user.id);
  if (row?.customer_id && row.plan !== "free" && row.status !== "canceled") {
    return portalLocation(deps, payments, row.customer_id, `${origin}/account`);
  }
  try {
    const session = await payments.checkout({
      price,
      plan: String(plan),
      accountId: user.id,
      email: user.email,
      customer: row?.customer_id ?? null,
      successUrl: `${origin}/account?checkout=done&session={CHECKOUT_SESSION_ID}`,
      cancelUrl: `${origin}/account?checkout=cancelled#plans`,
    });
    return session.url;
  } catch (err) {
    deps.logger.warn({ err: (err as Error).message }, "stripe checkout session not created");
    throw new ApiError("upstream_error", STRIPE_DOWN);
  }
}

async function portalLocation(deps: CheckoutDeps, payments: Payments, customer: string, returnUrl: string) {
  try {
    return (await payments.portal({ customer, returnUrl })).url;
  } catch (err) {
    deps.logger.warn({ err: (err as Error).message }, "stripe portal session not created");
    throw new ApiError("upstream_error", STRIPE_DOWN);
  }
}

/**
 * `POST /account/billing/checkout` (a Buy button: a Stripe Checkout Session in subscription mode,
 * answered 303 to Stripe) and `POST /account/billing/portal` (Manage billing: Stripe's Customer
 * Portal). Plain form posts, same origin and CSRF-checked like every account form.
 */
export function registerBillingPages(app: OpenAPIHono<AppEnv>, hooks: AccountHooks, deps: CheckoutDeps): void {
  app.post("/account/billing/checkout", async (c) => {
    const { s, body } = await hooks.guard(c);
    return seeOther(await checkoutLocation(deps, s.user, body.plan, hooks.origin(c)));
  });

  app.post("/account/billing/portal", async (c) => {
    const { s } = await hooks.guard(c);
    if (!deps.payments) throw new ApiError("unavailable", NOT_CONFIGURED);
    const row = await deps.store.get(s.user.id);
    if (!row?.customer_id)
      throw new ApiError("not_found", "This account has no billing with Stripe yet: buy a plan first.");
    return seeOther(await portalLocation(deps, deps.payments, row.customer_id, `${hooks.origin(c)}/account`));
  });
}
