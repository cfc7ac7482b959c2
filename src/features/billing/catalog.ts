import type { Payments, PlanPrice } from "../../ports/payments.js";
import { PLAN_NAMES, PLANS, type Plan } from "../keys/index.js";

export interface PlanCard {
  plan: Plan;
  /** The recurring price Stripe holds for the plan; null: free, or not readable now. */
  price: PlanPrice | null;
}

/** Every plan with its limits and, for the paid ones, the price Stripe has for it. */
export async function planCards(payments: Payments | undefined): Promise<PlanCard[]> {
  return Promise.all(
    PLAN_NAMES.map(async (name) => {
      const id = payments?.prices[name];
      const price = id ? await payments?.price(id).catch(() => null) : null;
      return { plan: PLANS[name], price: price ?? null };
    }),
  );
}

/** `€19.00 a month`, `$190.00 every 12 months`. */
export function priceText(p: PlanPrice): string {
  let money: string;
  try {
    money = new Intl.NumberFormat("en", { style: "currency", currency: p.currency.toUpperCase() }).format(
      p.amount / 100,
    );
  } catch {
    money = `${(p.amount / 100).toFixed(2)} ${p.currency.toUpperCase()}`;
  }
  return p.intervalCount === 1 ? `${money} a ${p.interval}` : `${money} every ${p.intervalCount} ${p.interval}s`;
}

/** `2026-12-28` (UTC). */
export const day = (isoTime: string) => isoTime.slice(0, 10);
