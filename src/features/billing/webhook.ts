import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import type { AppDeps } from "../../app-deps.js";
import { ApiError } from "../../http/errors.js";
import type { AppEnv } from "../../http/types.js";
import { isPlanName } from "../keys/index.js";
import { errorResponse, HEADERS_MAX } from "../shared/responses.js";
import type { Outcome, SubscriptionLife } from "./lifecycle.js";
import { CheckoutSession, Invoice, Subscription } from "./stripe-objects.js";

const WebhookAnswer = z
  .object({
    received: z.literal(true),
    applied: z.boolean(),
    email: z.string().optional(),
    plan: z.string().optional(),
    ignored: z.string().optional().openapi({ description: "Why a well-signed event changed nothing." }),
  })
  .openapi("BillingWebhookAnswer");

/** The envelope of every Stripe event (the parts we read); a signed body of another shape is a 400. */
const StripeEvent = z
  .object({
    id: z.string().max(255).openapi({ example: "evt_1QxYz2AbCdEfGhIj" }),
    type: z.string().max(255).openapi({ example: "checkout.session.completed" }),
    created: z
      .number()
      .int()
      .nonnegative()
      .optional()
      .openapi({ description: "When Stripe made the event (Unix seconds).", example: 1732530000 }),
    data: z.object({
      object: z
        .record(z.string(), z.unknown())
        .openapi({ description: "The event's object: a Checkout Session, a Subscription or an Invoice." }),
    }),
  })
  .openapi("StripeEvent", { description: "A Stripe event, as Stripe sends it (other fields are ignored)." });

const NOT_AN_EVENT = "The signed body is not a Stripe event.";

const route = createRoute({
  method: "post",
  path: "/v1/billing/webhook",
  tags: ["Billing"],
  summary: "Stripe webhook: purchases and the subscription's life",
  description:
    "Not a client operation: Stripe POSTs its events to `/v1/billing/webhook` on this server, signed in " +
    "`Stripe-Signature` with the endpoint's secret (`STRIPE_WEBHOOK_SECRET`). Applied: " +
    "`checkout.session.completed` (a plan starts: the session's `metadata.plan`, for the account in " +
    "`client_reference_id`), `invoice.paid` (a renewal: a new period and its uses), " +
    "`customer.subscription.updated` (an upgrade at once, a downgrade or a cancellation at the period's end), " +
    "`customer.subscription.deleted` (back to free) and `invoice.payment_failed` (a notice; the plan stays). " +
    "Each event id is applied once (Stripe retries), and an event older than the one applied last changes " +
    "nothing. Without `STRIPE_WEBHOOK_SECRET` the endpoint answers 503 `unavailable`.",
  request: {
    headers: z.object({
      "Stripe-Signature": z.string().max(HEADERS_MAX).openapi({
        description: "`t=<unix seconds>,v1=<HMAC-SHA256 hex>`, made by Stripe with the endpoint's secret.",
        example: "t=1732530000,v1=5257a869e7ecebeda32affa62cdca3fa51cad7e77a0e56ff536d0ce8e108d8bd",
      }),
    }),
    body: { required: true, content: { "application/json": { schema: StripeEvent } } },
  },
  responses: {
    200: {
      description: "Received (applied, or ignored with the reason).",
      content: {
        "application/json": {
          schema: WebhookAnswer,
          example: { received: true, applied: true, email: "ada@example.com", plan: "pro" },
        },
      },
    },
    400: errorResponse("Missing or wrong `Stripe-Signature`, or not a Stripe event.", {
      signature: {
        code: "invalid_body",
        message: "Stripe signature verification failed.",
        reason: "INVALID_SIGNATURE",
      },
      not_an_event: { code: "invalid_body", message: NOT_AN_EVENT },
    }),
    503: errorResponse("Billing is not configured on this server (no `STRIPE_WEBHOOK_SECRET`).", {
      unconfigured: { code: "unavailable", message: "Billing is not configured on this server." },
    }),
  },
});

const EMAIL = /^[^\s@]+@[^\s@]+$/;

/** The last `t=` of a `Stripe-Signature` header, read as the stripe package reads it (seconds). */
function signedAt(header: string): number {
  let t = Number.NaN;
  for (const item of header.split(",")) {
    const [name, value] = item.split("=");
    if (name === "t") t = Number.parseInt(value ?? "", 10);
  }
  return t;
}

/**
 * The event, when `signature` is the endpoint's and was made within Stripe's default tolerance
 * (300 s) of `nowMs` either way: the package bounds only the age, so a signature dated in the
 * future (a clock or key misuse, or one kept to replay later) is refused here too.
 */
async function verifiedEvent(payload: string, signature: string, secret: string, nowMs: number) {
  const { default: Stripe } = await import("stripe"); // loaded on first use: a large SDK
  const tolerance = Stripe.webhooks.DEFAULT_TOLERANCE;
  let event: unknown;
  try {
    event = Stripe.webhooks.constructEvent(payload, signature, secret, tolerance, undefined, nowMs);
  } catch {
    event = undefined;
  }
  if (event === undefined || !(signedAt(signature) - nowMs / 1000 <= tolerance)) {
    throw new ApiError("invalid_body", "Stripe signature verification failed.", { reason: "INVALID_SIGNATURE" });
  }
  // Well signed is not well formed: `null`, an array or a number signs as well as an event.
  const parsed = StripeEvent.safeParse(event);
  if (!parsed.success) throw new ApiError("invalid_body", NOT_AN_EVENT);
  return parsed.data;
}

/**
 * `POST /v1/billing/webhook`: the raw body is verified with the official `stripe` package. In the
 * document's `webhooks` (keyed by the path Stripe posts to), not `paths`: no client calls it.
 */
export function registerBillingWebhook(
  app: OpenAPIHono<AppEnv>,
  deps: Pick<AppDeps, "keys" | "config" | "logger" | "now">,
  life: SubscriptionLife,
): void {
  /** Applies a subscription's event once (Stripe retries), in order (lifecycle.ts). */
  async function once(id: string, type: string, created: number, apply: () => Promise<Outcome>) {
    if (!(await deps.keys.accounts.plans.firstDelivery(id, type))) {
      return { received: true as const, applied: false, ignored: "event already applied" };
    }
    let outcome: Outcome;
    try {
      outcome = await apply();
    } catch (err) {
      await deps.keys.accounts.plans.forgetDelivery(id).catch(() => undefined);
      throw err;
    }
    if (outcome.applied) deps.logger.info({ event: id, type, created, plan: outcome.plan }, "billing event applied");
    return { received: true as const, ...outcome };
  }

  app.openAPIRegistry.registerWebhook(route);
  app.post(route.path, async (c) => {
    const secret = deps.config.STRIPE_WEBHOOK_SECRET;
    if (!secret) throw new ApiError("unavailable", "Billing is not configured on this server.");
    const payload = await c.req.text();
    const signature = c.req.header("stripe-signature") ?? "";
    const event = await verifiedEvent(payload, signature, secret, deps.now().getTime());
    const created = event.created ?? Math.floor(deps.now().getTime() / 1000);
    const object = event.data.object;
    const as = <T>(schema: z.ZodType<T>, what: string, apply: (o: T) => Promise<Outcome>) => {
      const o = schema.safeParse(object);
      if (!o.success) return c.json({ received: true, applied: false, ignored: `data.object is not ${what}` }, 200);
      return once(event.id, event.type, created, () => apply(o.data)).then((a) => c.json(a, 200));
    };
    switch (event.type) {
      case "customer.subscription.created":
      case "customer.subscription.updated":
        return as(Subscription, "a Subscription", (o) => life.subscriptionChanged(created, o));
      case "customer.subscription.deleted":
        return as(Subscription, "a Subscription", (o) => life.subscriptionEnded(created, o));
      case "invoice.paid":
        return as(Invoice, "an Invoice", (o) => life.invoicePaid(created, o));
      case "invoice.payment_failed":
        return as(Invoice, "an Invoice", (o) => life.paymentFailed(created, o));
      case "checkout.session.completed":
        break;
      default:
        return c.json({ received: true, applied: false, ignored: `event type ${event.type}` }, 200);
    }
    const parsed = CheckoutSession.safeParse(object);
    // A Stripe event, well signed, whose object is not a session we can read: nothing to apply
    // (as the document says: any object; a retry would not change it).
    if (!parsed.success)
      return c.json({ received: true, applied: false, ignored: "data.object is not a Checkout Session" }, 200);
    const s = parsed.data;
    if (s.payment_status !== "paid" && s.payment_status !== "no_payment_required") {
      return c.json(
        { received: true, applied: false, ignored: `payment_status ${s.payment_status ?? "missing"}` },
        200,
      );
    }
    if (s.mode === "subscription")
      return as(CheckoutSession, "a Checkout Session", (o) => life.checkoutCompleted(created, o));
    const plan = s.metadata?.plan;
    if (!isPlanName(plan))
      return c.json({ received: true, applied: false, ignored: "metadata.plan is not a plan" }, 200);
    const ref = s.client_reference_id ?? null;
    const email =
      (ref && EMAIL.test(ref) ? ref : ref ? await deps.keys.accounts.plans.emailFor(ref) : null) ??
      s.customer_details?.email ??
      s.customer_email ??
      null;
    if (!email) return c.json({ received: true, applied: false, ignored: "no customer e-mail" }, 200);
    if (!(await deps.keys.accounts.plans.firstDelivery(event.id, event.type))) {
      return c.json({ received: true, applied: false, ignored: "event already applied" }, 200);
    }
    // Stripe delivers in any order and retries for days: a purchase older than the one in force is late.
    const purchasedAt = event.created ? new Date(event.created * 1000).toISOString() : undefined;
    let granted: Awaited<ReturnType<typeof deps.keys.accounts.purchase>>;
    try {
      granted = await deps.keys.accounts.purchase(email, plan, s.id, purchasedAt);
    } catch (err) {
      await deps.keys.accounts.plans.forgetDelivery(event.id).catch(() => undefined);
      throw err;
    }
    if (!granted) return c.json({ received: true, applied: false, ignored: "a later purchase is in force" }, 200);
    deps.logger.info(
      { email, plan, session: s.id, revokedKeys: granted.revokedKeys.map((k) => k.id) },
      `plan granted by purchase: ${granted.message}`,
    );
    return c.json({ received: true, applied: true, email: email.toLowerCase(), plan }, 200);
  });
}
