import type { KeyService } from "../keys/index.js";
import { isPlanName, PLAN_NAMES, type PlanName } from "../keys/index.js";
import type { CheckoutSession, Invoice, Subscription } from "./stripe-objects.js";
import type { SubscriptionRow, SubscriptionStore } from "./subscriptions.js";

export type Outcome = { applied: true; email: string; plan: string } | { applied: false; ignored: string };

const ignored = (why: string): Outcome => ({ applied: false, ignored: why });
const iso = (sec: number) => new Date(sec * 1000).toISOString();
const rank = (plan: string) => PLAN_NAMES.indexOf(isPlanName(plan) ? plan : "free");
/** Stripe's statuses of a subscription that no longer pays for anything. */
const ENDED = new Set(["canceled", "unpaid", "incomplete_expired"]);

/**
 * A subscription's whole life from Stripe's signed events (each event id is applied once by the
 * webhook; here, each in order): Checkout starts the plan; a paid renewal invoice starts a new
 * period and refills the period's uses (set to the plan's, never added to what is left); an
 * upgrade applies at once, a downgrade or a cancellation when the paid period ends; a failed
 * payment is a notice and the plan stays until Stripe gives up (the subscription ends).
 */
export class SubscriptionLife {
  constructor(
    private readonly store: SubscriptionStore,
    private readonly keys: KeyService,
    /** Price id → plan (STRIPE_PRICE_PRO, STRIPE_PRICE_SCALE). */
    private readonly planOfPrice: (price: string | null | undefined) => PlanName | undefined,
    private readonly now: () => Date,
  ) {}

  private async accountOf(ref: string | null | undefined, customer: string | null | undefined) {
    const row = customer ? await this.store.byCustomer(customer) : undefined;
    const accountId = ref ?? row?.account_id;
    if (!accountId) return undefined;
    const email = row?.account_id === accountId ? row.email : await this.keys.accounts.plans.emailFor(accountId);
    return email ? { accountId, email } : undefined;
  }

  /** A subscription-mode Checkout Session completed: the plan starts. */
  async checkoutCompleted(created: number, s: CheckoutSession): Promise<Outcome> {
    const plan = s.metadata?.plan;
    if (!isPlanName(plan) || plan === "free") return ignored("metadata.plan is not a paid plan");
    const who = await this.accountOf(s.client_reference_id, s.customer);
    if (!who) return ignored("client_reference_id is not an account");
    await this.store.apply(who.accountId, who.email, created, {
      plan,
      status: "active",
      customer_id: s.customer ?? null,
      subscription_id: s.subscription ?? null,
      checkout_session: s.id,
      cancel_at_period_end: 0,
      next_plan: null,
    });
    const granted = await this.keys.accounts.purchase(who.email, plan, s.id, iso(created));
    if (!granted) return ignored("a later purchase is in force");
    return { applied: true, email: who.email.toLowerCase(), plan };
  }

  /** `customer.subscription.updated` (and `created`): status, period, cancellation, plan changes. */
  async subscriptionChanged(created: number, sub: Subscription): Promise<Outcome> {
    const who = await this.accountOf(sub.metadata?.account_id, sub.customer);
    if (!who) return ignored("the subscription is not an account's");
    const item = sub.items.data[0];
    const plan = this.planOfPrice(item?.price.id) ?? sub.metadata?.plan;
    if (!isPlanName(plan)) return ignored("the subscription's price is not a plan's");
    if (ENDED.has(sub.status)) return this.subscriptionEnded(created, sub);
    const before = await this.store.get(who.accountId);
    const inForce = before && before.plan !== "free" ? before.plan : plan;
    const upgrade = rank(plan) > rank(inForce);
    const downgrade = rank(plan) < rank(inForce);
    const state = {
      plan: downgrade ? inForce : plan,
      status: sub.status,
      customer_id: sub.customer,
      subscription_id: sub.id,
      period_start: item?.current_period_start ? iso(item.current_period_start) : (before?.period_start ?? null),
      period_end: item?.current_period_end ? iso(item.current_period_end) : (before?.period_end ?? null),
      cancel_at_period_end: sub.cancel_at_period_end || sub.cancel_at ? 1 : 0,
      // A downgrade starts with the next period: this one is paid for.
      next_plan: downgrade ? plan : null,
    };
    if (!(await this.store.apply(who.accountId, who.email, created, state)))
      return ignored("a later event is in force");
    if (upgrade || !before || before.plan === "free") {
      const granted = await this.keys.accounts.purchase(who.email, plan, sub.id, iso(created));
      if (!granted) return ignored("a later purchase is in force");
    }
    if (state.period_start && state.period_end)
      await this.keys.accounts.quotas.setPeriod(who.accountId, state.period_start, state.period_end);
    return { applied: true, email: who.email.toLowerCase(), plan: state.plan };
  }

  /**
   * `customer.subscription.deleted`: back to free when the paid period is over (at once when the
   * event says it is), else at its end.
   */
  async subscriptionEnded(created: number, sub: Subscription): Promise<Outcome> {
    const who = await this.accountOf(sub.metadata?.account_id, sub.customer);
    if (!who) return ignored("the subscription is not an account's");
    const before = await this.store.get(who.accountId);
    const periodEnd = sub.items.data[0]?.current_period_end;
    const endSec = Math.min(sub.ended_at ?? created, periodEnd ?? Number.POSITIVE_INFINITY);
    const over = endSec * 1000 <= this.now().getTime();
    const state = {
      plan: over ? "free" : (before?.plan ?? "free"),
      status: sub.status,
      customer_id: sub.customer,
      subscription_id: sub.id,
      period_end: periodEnd ? iso(periodEnd) : (before?.period_end ?? null),
      cancel_at_period_end: 1,
      next_plan: null,
    };
    if (!(await this.store.apply(who.accountId, who.email, created, state)))
      return ignored("a later event is in force");
    if (!over) return { applied: true, email: who.email.toLowerCase(), plan: state.plan };
    const granted = await this.keys.accounts.purchase(who.email, "free", sub.id, iso(created));
    if (!granted) return ignored("a later purchase is in force");
    return { applied: true, email: who.email.toLowerCase(), plan: "free" };
  }

  /** `invoice.paid`: the last payment; a renewal starts a new period and refills its uses. */
  async invoicePaid(created: number, inv: Invoice): Promise<Outcome> {
    const details = inv.parent?.subscription_details;
    const who = await this.accountOf(details?.metadata?.account_id, inv.customer);
    if (!who) return ignored("the invoice is not an account's");
    const line = inv.lines.data.find((l) => l.period) ?? inv.lines.data[0];
    const plan = this.planOfPrice(line?.pricing?.price_details?.price) ?? details?.metadata?.plan;
    if (!isPlanName(plan)) return ignored("the invoice's price is not a plan's");
    const before = await this.store.get(who.accountId);
    const paidAt = iso(inv.status_transitions?.paid_at ?? created);
    if (!before) {
      await this.store.apply(who.accountId, who.email, created, {
        plan,
        status: "active",
        customer_id: inv.customer ?? null,
        subscription_id: details?.subscription ?? null,
      });
    }
    if (!before?.last_payment_at || before.last_payment_at <= paidAt) {
      await this.store.patch(who.accountId, {
        payment_failed_at: null,
        last_payment_amount: inv.amount_paid ?? 0,
        last_payment_currency: inv.currency ?? null,
        last_payment_at: paidAt,
      });
    }
    const start = line?.period ? iso(line.period.start) : undefined;
    const newPeriod = start !== undefined && (!before?.period_start || before.period_start < start);
    if (!newPeriod || !line?.period) return ignored("not a new period");
    await this.store.patch(who.accountId, {
      period_start: start,
      period_end: iso(line.period.end),
      plan,
      next_plan: null,
    });
    // The first invoice is Checkout's: the plan started with checkout.session.completed.
    const first = inv.billing_reason === "subscription_create" && before?.plan === plan;
    if (!first && !(await this.keys.accounts.purchase(who.email, plan, inv.id, iso(created)))) {
      return ignored("a later purchase is in force");
    }
    await this.keys.accounts.quotas.setPeriod(who.accountId, start, iso(line.period.end));
    return { applied: true, email: who.email.toLowerCase(), plan };
  }

  /** `invoice.payment_failed`: a notice on the page; the plan stays while Stripe retries. */
  async paymentFailed(created: number, inv: Invoice): Promise<Outcome> {
    const who = await this.accountOf(inv.parent?.subscription_details?.metadata?.account_id, inv.customer);
    if (!who) return ignored("the invoice is not an account's");
    const before = await this.store.get(who.accountId);
    if (!before) return ignored("no subscription for the invoice");
    if (before.last_payment_at && before.last_payment_at > iso(created)) return ignored("paid since");
    await this.store.patch(who.accountId, { payment_failed_at: iso(created) });
    return { applied: true, email: who.email.toLowerCase(), plan: before.plan };
  }

  /**
   * Applies what falls due when a paid period ends without a renewal: a cancellation (back to free)
   * or a downgrade. Every instance may run it: the conditional update lets one apply each.
   */
  async settleDue(accountId?: string): Promise<number> {
    const nowIso = this.now().toISOString();
    let rows = await this.store.due(nowIso);
    if (accountId !== undefined) rows = rows.filter((r) => r.account_id === accountId);
    let settled = 0;
    for (const row of rows) if (await this.settle(row)) settled++;
    return settled;
  }

  private async settle(row: SubscriptionRow): Promise<boolean> {
    const plan = row.cancel_at_period_end ? "free" : row.next_plan;
    if (!isPlanName(plan) || !row.period_end) return false;
    const won = await this.store.settle(row, {
      plan,
      status: plan === "free" ? "canceled" : row.status,
      next_plan: null,
      cancel_at_period_end: 0,
    });
    if (!won) return false;
    await this.keys.accounts.purchase(row.email, plan, row.subscription_id ?? row.account_id, row.period_end);
    return true;
  }
}
