/** A recurring price as the plans table shows it. */
export interface PlanPrice {
  /** In the currency's smallest unit (cents). */
  amount: number;
  /** ISO 4217, lower case (`eur`). */
  currency: string;
  /** `month`, `year`, … */
  interval: string;
  intervalCount: number;
}

export interface CheckoutRequest {
  price: string;
  plan: string;
  /** The account: the session's `client_reference_id`, and in the subscription's metadata. */
  accountId: string;
  email: string;
  /** The account's Stripe customer, when it had a subscription before (else `customer_email`). */
  customer: string | null;
  successUrl: string;
  cancelUrl: string;
}

/**
 * The payment provider (Stripe): hosted Checkout for a subscription, the hosted Customer Portal,
 * and the prices. Absent when STRIPE_SECRET_KEY or a plan's price is unset. A failure (the
 * provider down or refusing) is thrown as an Error.
 */
export interface Payments {
  /** The price id of each paid plan. */
  readonly prices: Readonly<Record<string, string>>;
  checkout(req: CheckoutRequest): Promise<{ id: string; url: string }>;
  portal(req: { customer: string; returnUrl: string }): Promise<{ url: string }>;
  price(id: string): Promise<PlanPrice>;
}
