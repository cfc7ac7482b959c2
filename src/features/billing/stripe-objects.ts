import { z } from "zod";

/**
 * The fields of Stripe's objects that billing reads, in the shapes of Stripe's published API
 * (stripe/openapi): everything else may vary. Since API version 2025-03-31 a subscription's period
 * is on its items and an invoice names its subscription under `parent.subscription_details`.
 */
const id = z.string().max(255);
const expandable = z.union([id, z.object({ id }).transform((o) => o.id)]);
const metadata = z.record(z.string(), z.string()).nullish();

export const CheckoutSession = z.object({
  id,
  mode: z.string().nullish(),
  client_reference_id: z.string().nullish(),
  customer: expandable.nullish(),
  subscription: expandable.nullish(),
  customer_email: z.string().nullish(),
  customer_details: z.object({ email: z.string().nullish() }).nullish(),
  payment_status: z.string().nullish(),
  metadata,
});
export type CheckoutSession = z.infer<typeof CheckoutSession>;

const period = z.object({ start: z.number().int(), end: z.number().int() });

export const Subscription = z.object({
  id,
  customer: expandable,
  status: z.string(),
  cancel_at_period_end: z.boolean().nullish(),
  cancel_at: z.number().int().nullish(),
  ended_at: z.number().int().nullish(),
  metadata,
  items: z.object({
    data: z
      .array(
        z.object({
          price: z.object({ id }),
          current_period_start: z.number().int().nullish(),
          current_period_end: z.number().int().nullish(),
        }),
      )
      .min(1),
  }),
});
export type Subscription = z.infer<typeof Subscription>;

export const Invoice = z.object({
  id,
  customer: expandable.nullish(),
  billing_reason: z.string().nullish(),
  amount_paid: z.number().int().nullish(),
  currency: z.string().nullish(),
  status_transitions: z.object({ paid_at: z.number().int().nullish() }).nullish(),
  parent: z
    .object({
      subscription_details: z.object({ subscription: expandable.nullish(), metadata }).nullish(),
    })
    .nullish(),
  lines: z.object({
    data: z.array(
      z.object({
        period: period.nullish(),
        pricing: z.object({ price_details: z.object({ price: expandable.nullish() }).nullish() }).nullish(),
      }),
    ),
  }),
});
export type Invoice = z.infer<typeof Invoice>;
