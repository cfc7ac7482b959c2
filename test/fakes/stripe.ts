import { randomBytes } from "node:crypto";
import Stripe from "stripe";

type Deliver = (path: string, init: RequestInit) => Response | Promise<Response>;

/**
 * Stripe's side of a webhook endpoint: builds `checkout.session.completed` events in Stripe's
 * published shape and delivers them signed exactly as Stripe signs (`Stripe-Signature: t=…,v1=…`,
 * made by the official package's `webhooks.generateTestHeaderString`).
 */
export class FakeStripe {
  constructor(
    private readonly deliverTo: Deliver,
    readonly secret = `whsec_${randomBytes(16).toString("hex")}`,
  ) {}

  checkoutCompleted(session: {
    email?: string;
    clientReferenceId?: string;
    plan?: string;
    paymentStatus?: string;
    /** When Stripe made the event (Unix seconds; default: now). */
    created?: number;
  }): {
    id: string;
    type: string;
    created: number;
    data: { object: Record<string, unknown> };
  } {
    const id = `cs_test_${randomBytes(12).toString("hex")}`;
    return {
      id: `evt_${randomBytes(12).toString("hex")}`,
      type: "checkout.session.completed",
      created: session.created ?? Math.floor(Date.now() / 1000),
      data: {
        object: {
          id,
          object: "checkout.session",
          mode: "payment",
          client_reference_id: session.clientReferenceId ?? null,
          customer_email: null,
          customer_details: { email: session.email ?? null, name: "Test Buyer" },
          payment_status: session.paymentStatus ?? "paid",
          status: "complete",
          metadata: session.plan === undefined ? {} : { plan: session.plan },
          amount_total: 1900,
          currency: "eur",
        },
      },
    };
  }

  /**
   * POSTs `event` to `path`, signed with `secret` (default: this endpoint's secret) at
   * `timestamp` (Unix seconds; default: now).
   */
  async send(path: string, event: object, secret = this.secret, timestamp?: number): Promise<Response> {
    const payload = JSON.stringify({
      object: "event",
      api_version: "2025-01-27",
      created: 0,
      livemode: false,
      ...event,
    });
    const signature = Stripe.webhooks.generateTestHeaderString({
      payload,
      secret,
      ...(timestamp !== undefined && { timestamp }),
    });
    return this.deliverTo(path, {
      method: "POST",
      headers: { "Content-Type": "application/json", "Stripe-Signature": signature },
      body: payload,
    });
  }
}
