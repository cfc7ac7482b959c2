import type { Payments } from "../../ports/payments.js";
import { isPlanName, type PlanName, type QuotaPeriod } from "../keys/index.js";
import { day, type PlanCard, planCards, priceText } from "./catalog.js";
import type { SubscriptionLife } from "./lifecycle.js";
import type { SubscriptionStore } from "./subscriptions.js";

/** How often the page asks again while Stripe confirms a purchase, and for how many times. */
export const CONFIRM_REFRESH_SEC = 2;
const CONFIRM_TRIES = 90;

export interface BillingView {
  /** The plan in force. */
  plan: PlanName;
  cards: PlanCard[];
  /** STRIPE_SECRET_KEY and the plans' prices are set. */
  configured: boolean;
  /** A paid subscription runs: other plans are changed in the Customer Portal. */
  subscribed: boolean;
  /** A Stripe customer exists for the account and purchase is configured. */
  manageable: boolean;
  /** Back from Checkout: `pending` until the webhook applied its session. */
  checkout?: "pending" | "slow" | "confirmed" | "cancelled";
  /** While pending: the page asks again at this address after CONFIRM_REFRESH_SEC. */
  refresh?: string;
  /** `?buy=pro` from the home page. */
  chosen?: PlanName;
  /** The account's uses in this period: what is left and when they refill. */
  quota?: { remaining: number | null; periodStart: string | null; periodEnd: string | null; refillsOn: string | null };
  subscription?: {
    renewsOn?: string;
    endsOn?: string;
    changesOn?: string;
    nextPlan?: string;
    lastPayment?: string;
    paymentFailedAt?: string;
  };
}

export interface BillingViewDeps {
  payments?: Payments;
  quotas: { period(pool: string): Promise<QuotaPeriod | undefined> };
  store: SubscriptionStore;
  life: SubscriptionLife;
}

/** What the account page shows of plans and billing, from its query (`checkout`, `session`, `wait`, `buy`). */
export async function billingView(
  deps: BillingViewDeps,
  accountId: string,
  /** The pool the account's keys spend (quotaPool): its uses and period. */
  pool: string,
  plan: PlanName,
  query: (name: string) => string | undefined,
): Promise<BillingView> {
  // A cancellation or downgrade due at the end of the period shows on the page at once.
  await deps.life.settleDue(accountId);
  const row = await deps.store.get(accountId);
  const view: BillingView = {
    plan,
    cards: await planCards(deps.payments),
    configured: deps.payments !== undefined,
    subscribed: row !== undefined && row.plan !== "free" && row.status !== "canceled",
    manageable: deps.payments !== undefined && !!row?.customer_id,
  };
  const quota = await deps.quotas.period(pool);
  if (quota) {
    const refill = quota.refillAt ?? (plan !== "free" ? quota.periodEnd : null);
    view.quota = { ...quota, refillsOn: refill && day(refill) };
  }
  const buy = query("buy");
  if (isPlanName(buy)) view.chosen = buy;
  const session = query("session") ?? "";
  if (query("checkout") === "cancelled") view.checkout = "cancelled";
  else if (query("checkout") === "done" && /^cs_[A-Za-z0-9_]{1,200}$/.test(session)) {
    const wait = Math.max(0, Number.parseInt(query("wait") ?? "0", 10) || 0);
    if (row?.checkout_session === session) view.checkout = "confirmed";
    else if (wait >= CONFIRM_TRIES) view.checkout = "slow";
    else {
      view.checkout = "pending";
      view.refresh = `/account?checkout=done&session=${session}&wait=${wait + 1}`;
    }
  }
  if (row && row.plan !== "free") {
    const s: NonNullable<BillingView["subscription"]> = {};
    if (row.period_end && row.cancel_at_period_end) s.endsOn = day(row.period_end);
    else if (row.period_end && row.next_plan) {
      s.changesOn = day(row.period_end);
      s.nextPlan = row.next_plan;
    } else if (row.period_end) s.renewsOn = day(row.period_end);
    if (row.payment_failed_at) s.paymentFailedAt = row.payment_failed_at;
    view.subscription = s;
  }
  if (row?.last_payment_at && row.last_payment_currency) {
    view.subscription ??= {};
    view.subscription.lastPayment = `${priceText({
      amount: row.last_payment_amount ?? 0,
      currency: row.last_payment_currency,
      interval: "",
      intervalCount: 1,
    }).replace(/ a $/, "")} on ${day(row.last_payment_at)}`;
  }
  return view;
}
