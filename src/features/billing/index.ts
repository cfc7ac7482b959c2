// The billing feature's public face: what the account and home pages and the composition root use.
import type { AppDeps } from "../../app-deps.js";
import type { KeyService, PlanName } from "../keys/index.js";
import { SubscriptionLife } from "./lifecycle.js";
import { SubscriptionStore } from "./subscriptions.js";

export { type PlanCard, planCards } from "./catalog.js";
export { type AccountHooks, type CheckoutDeps, checkoutLocation, registerBillingPages } from "./pages.js";
export { type BillingView, billingView, CONFIRM_REFRESH_SEC } from "./view-model.js";
export { BillingSection, PlansTable } from "./views.jsx";
export { registerBillingWebhook } from "./webhook.js";

export interface Billing {
  store: SubscriptionStore;
  life: SubscriptionLife;
  quotas: KeyService["accounts"]["quotas"];
}

/** The subscription store and its life over the app's database (both stateless: one per user is fine). */
export function billingOf(deps: Pick<AppDeps, "database" | "keys" | "config" | "now">): Billing {
  const store = new SubscriptionStore(deps.database.db, deps.now);
  const byPrice = new Map<string, PlanName>();
  if (deps.config.STRIPE_PRICE_PRO) byPrice.set(deps.config.STRIPE_PRICE_PRO, "pro");
  if (deps.config.STRIPE_PRICE_SCALE) byPrice.set(deps.config.STRIPE_PRICE_SCALE, "scale");
  const life = new SubscriptionLife(store, deps.keys, (p) => (p ? byPrice.get(p) : undefined), deps.now);
  return { store, life, quotas: deps.keys.accounts.quotas };
}
