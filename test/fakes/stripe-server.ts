import { randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { FakeStripe } from "./stripe.js";

type Deliver = (path: string, init: RequestInit) => Response | Promise<Response>;
type Obj = Record<string, unknown>;

const rid = (prefix: string) => `${prefix}_test_${randomBytes(10).toString("hex")}`;
const nowSec = () => Math.floor(Date.now() / 1000);
const MONTH = 30 * 86_400;

/** `a[b][0][c]=v` (Stripe's form encoding) → nested objects and arrays. */
export function parseStripeForm(body: string): Obj {
  const out: Obj = {};
  for (const [key, value] of new URLSearchParams(body)) {
    const path = key.split(/\[|\]\[|\]/).filter((p) => p !== "");
    let at: Obj = out;
    path.forEach((p, i) => {
      if (i === path.length - 1) at[p] = value;
      else {
        at[p] ??= /^\d+$/.test(path[i + 1] ?? "") ? [] : {};
        at = at[p] as Obj;
      }
    });
  }
  return out;
}

export interface FakeSubscription {
  id: string;
  customer: string;
  price: string;
  status: string;
  cancel_at_period_end: boolean;
  start: number;
  end: number;
  metadata: Record<string, string>;
}

/**
 * Stripe's API and hosted pages as a real HTTP server on 127.0.0.1, in the shapes of Stripe's
 * published API (stripe/openapi, API version 2025-03-31 and later): `POST /v1/checkout/sessions`,
 * `POST /v1/billing_portal/sessions`, `GET /v1/prices/:id`; a Checkout page whose Pay button
 * starts the subscription, sends 303 back to the session's `success_url`, and then delivers the
 * signed events (`checkout.session.completed`, `customer.subscription.created`, `invoice.paid`);
 * a Customer Portal page whose Cancel button cancels at the period's end
 * (`customer.subscription.updated`). `endPeriod` and `renew` play the clock forward.
 */
export class FakeStripeServer {
  readonly signer: FakeStripe;
  readonly secretKey = `sk_test_${randomBytes(12).toString("hex")}`;
  readonly prices = { pro: "price_test_pro", scale: "price_test_scale" };
  readonly sessions = new Map<string, Obj>();
  readonly portals = new Map<string, Obj>();
  readonly subscriptions = new Map<string, FakeSubscription>();
  /** Every API request: method, path, form body. */
  readonly calls: { method: string; path: string; body: Obj; auth?: string }[] = [];
  /** Answer every API call with this status (a Stripe outage). */
  failWith: number | null = null;
  /** Events delivered, in order, with the app's answers. */
  readonly delivered: { type: string; status: number }[] = [];
  private server?: Server;
  private pending: Promise<unknown> = Promise.resolve();
  private gate: Promise<void> = Promise.resolve();
  base = "";

  constructor(deliver: Deliver, secret?: string) {
    this.signer = new FakeStripe(deliver, secret);
  }

  async start(): Promise<string> {
    this.server = createServer((req, res) => {
      this.handle(req, res).catch((err) => {
        res.writeHead(500).end(String(err));
      });
    });
    await new Promise<void>((r) => this.server?.listen(0, "127.0.0.1", r));
    this.base = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this.base;
  }

  async close() {
    await this.pending.catch(() => undefined);
    await new Promise<void>((r) => this.server?.close(() => r()) ?? r());
  }

  /** Holds back the events of the next payments until the returned function is called. */
  hold(): () => void {
    let release = () => {};
    this.gate = new Promise<void>((r) => {
      release = r;
    });
    return release;
  }

  /** Waits for the events the pages set off. */
  settled(): Promise<unknown> {
    return this.pending;
  }

  private async handle(req: IncomingMessage, res: ServerResponse) {
    const chunks: Buffer[] = [];
    for await (const ch of req) chunks.push(ch as Buffer);
    const raw = Buffer.concat(chunks).toString("utf8");
    const url = new URL(req.url ?? "/", this.base);
    const json = (status: number, body: unknown) =>
      res.writeHead(status, { "Content-Type": "application/json", "Request-Id": rid("req") }).end(JSON.stringify(body));
    const html = (body: string) => res.writeHead(200, { "Content-Type": "text/html; charset=utf-8" }).end(body);
    const redirect = (to: string) => res.writeHead(303, { Location: to }).end();

    if (url.pathname.startsWith("/v1/")) {
      const body = parseStripeForm(raw);
      this.calls.push({ method: req.method ?? "", path: url.pathname, body, auth: req.headers.authorization });
      if (req.headers.authorization !== `Bearer ${this.secretKey}`) {
        return json(401, { error: { type: "invalid_request_error", message: "Invalid API Key provided" } });
      }
      if (this.failWith) return json(this.failWith, { error: { type: "api_error", message: "Fake outage" } });
      if (req.method === "POST" && url.pathname === "/v1/checkout/sessions") return json(200, this.createSession(body));
      if (req.method === "POST" && url.pathname === "/v1/billing_portal/sessions") {
        const id = rid("bps");
        const portal = {
          id,
          object: "billing_portal.session",
          configuration: "bpc_test_default",
          created: nowSec(),
          customer: body.customer,
          flow: null,
          livemode: false,
          locale: null,
          on_behalf_of: null,
          return_url: body.return_url ?? null,
          url: `${this.base}/portal/${id}`,
        };
        this.portals.set(id, portal);
        return json(200, portal);
      }
      const price = /^\/v1\/prices\/([\w-]+)$/.exec(url.pathname)?.[1];
      if (req.method === "GET" && price) {
        const amount = price === this.prices.scale ? 9900 : 1900;
        return json(200, {
          id: price,
          object: "price",
          active: true,
          currency: "eur",
          unit_amount: amount,
          unit_amount_decimal: String(amount),
          type: "recurring",
          recurring: {
            interval: "month",
            interval_count: 1,
            usage_type: "licensed",
            meter: null,
            trial_period_days: null,
          },
          product: "prod_test_almanac",
          livemode: false,
          metadata: {},
        });
      }
      return json(404, {
        error: { type: "invalid_request_error", message: `Unrecognized request URL (${url.pathname})` },
      });
    }

    const checkout = /^\/checkout\/(cs_[\w]+)(\/pay)?$/.exec(url.pathname);
    const session = checkout?.[1] ? this.sessions.get(checkout[1]) : undefined;
    if (checkout && session) {
      if (req.method === "GET") {
        return html(
          `<!doctype html><title>Fake Checkout</title><h1>Pay ${session.customer_email ?? ""}</h1>` +
            `<form method="post" action="/checkout/${session.id}/pay"><button>Pay</button></form>` +
            `<a href="${session.cancel_url}">Back</a>`,
        );
      }
      const sub = this.complete(session);
      // Stripe redirects at once and delivers the events on its own time.
      const gate = this.gate;
      this.pending = this.pending.then(() => gate).then(() => this.afterCheckout(session, sub));
      return redirect(String(session.success_url).replace("{CHECKOUT_SESSION_ID}", String(session.id)));
    }

    const portalPath = /^\/portal\/(bps_[\w]+)(\/cancel)?$/.exec(url.pathname);
    const portal = portalPath?.[1] ? this.portals.get(portalPath[1]) : undefined;
    if (portalPath && portal) {
      const sub = [...this.subscriptions.values()].find((s) => s.customer === portal.customer);
      if (req.method === "GET") {
        return html(
          `<!doctype html><title>Fake Customer Portal</title><h1>Your subscription</h1>` +
            (sub ? `<p>${sub.status} until ${new Date(sub.end * 1000).toISOString()}</p>` : "<p>None</p>") +
            `<form method="post" action="/portal/${portal.id}/cancel"><button>Cancel plan</button></form>` +
            `<a href="${portal.return_url}">Return</a>`,
        );
      }
      if (sub) {
        sub.cancel_at_period_end = true;
        await this.event("customer.subscription.updated", this.subscriptionObject(sub));
      }
      return redirect(String(portal.return_url));
    }
    res.writeHead(404).end("not found");
  }

  private createSession(body: Obj): Obj {
    const id = rid("cs");
    const items = (body.line_items as Obj[] | undefined) ?? [];
    const session: Obj = {
      id,
      object: "checkout.session",
      mode: body.mode ?? "payment",
      status: "open",
      payment_status: "unpaid",
      client_reference_id: body.client_reference_id ?? null,
      customer: body.customer ?? null,
      customer_email: body.customer_email ?? null,
      customer_details: null,
      subscription: null,
      success_url: body.success_url,
      cancel_url: body.cancel_url ?? null,
      metadata: body.metadata ?? {},
      created: nowSec(),
      expires_at: nowSec() + 86_400,
      livemode: false,
      url: `${this.base}/checkout/${id}`,
      line_items_requested: items,
      subscription_data_requested: body.subscription_data ?? null,
    };
    this.sessions.set(id, session);
    const { line_items_requested: _l, subscription_data_requested: _s, ...answer } = session;
    return answer;
  }

  private complete(session: Obj): FakeSubscription {
    const price = String(((session.line_items_requested as Obj[])[0] as Obj).price);
    const customer = String(session.customer ?? rid("cus"));
    const start = nowSec();
    const sub: FakeSubscription = {
      id: rid("sub"),
      customer,
      price,
      status: "active",
      cancel_at_period_end: false,
      start,
      end: start + MONTH,
      metadata: ((session.subscription_data_requested as Obj | null)?.metadata as Record<string, string>) ?? {},
    };
    this.subscriptions.set(sub.id, sub);
    Object.assign(session, {
      status: "complete",
      payment_status: "paid",
      customer,
      subscription: sub.id,
      customer_details: { email: session.customer_email, name: "Test Buyer" },
    });
    return sub;
  }

  private async afterCheckout(session: Obj, sub: FakeSubscription) {
    const { line_items_requested: _l, subscription_data_requested: _s, ...object } = session;
    await this.event("checkout.session.completed", object);
    await this.event("customer.subscription.created", this.subscriptionObject(sub));
    await this.event("invoice.paid", this.invoiceObject(sub, "subscription_create"));
  }

  subscriptionObject(sub: FakeSubscription): Obj {
    return {
      id: sub.id,
      object: "subscription",
      customer: sub.customer,
      status: sub.status,
      cancel_at_period_end: sub.cancel_at_period_end,
      cancel_at: sub.cancel_at_period_end ? sub.end : null,
      canceled_at: sub.cancel_at_period_end ? nowSec() : null,
      ended_at: sub.status === "canceled" ? nowSec() : null,
      created: sub.start,
      start_date: sub.start,
      livemode: false,
      metadata: sub.metadata,
      items: {
        object: "list",
        has_more: false,
        data: [
          {
            id: `si_${sub.id.slice(4)}`,
            object: "subscription_item",
            subscription: sub.id,
            quantity: 1,
            current_period_start: sub.start,
            current_period_end: sub.end,
            price: {
              id: sub.price,
              object: "price",
              currency: "eur",
              recurring: { interval: "month", interval_count: 1 },
            },
          },
        ],
      },
    };
  }

  invoiceObject(sub: FakeSubscription, reason: string, paid = true): Obj {
    const amount = sub.price === this.prices.scale ? 9900 : 1900;
    return {
      id: rid("in"),
      object: "invoice",
      customer: sub.customer,
      billing_reason: reason,
      status: paid ? "paid" : "open",
      amount_due: amount,
      amount_paid: paid ? amount : 0,
      currency: "eur",
      attempt_count: 1,
      created: nowSec(),
      period_start: sub.start,
      period_end: sub.end,
      status_transitions: {
        paid_at: paid ? nowSec() : null,
        finalized_at: nowSec(),
        voided_at: null,
        marked_uncollectible_at: null,
      },
      parent: {
        type: "subscription_details",
        quote_details: null,
        subscription_details: { subscription: sub.id, metadata: sub.metadata },
      },
      lines: {
        object: "list",
        has_more: false,
        data: [
          {
            id: rid("il"),
            object: "line_item",
            amount,
            currency: "eur",
            period: { start: sub.start, end: sub.end },
            pricing: { type: "price_details", price_details: { price: sub.price, product: "prod_test_almanac" } },
            parent: {
              type: "subscription_item_details",
              subscription_item_details: {
                subscription: sub.id,
                subscription_item: `si_${sub.id.slice(4)}`,
                proration: false,
              },
            },
          },
        ],
      },
    };
  }

  /** Delivers a signed event of `type` about `object`, made at `created` (default now). */
  async event(type: string, object: Obj, created = nowSec()): Promise<Response> {
    const res = await this.signer.send("/v1/billing/webhook", { id: rid("evt"), type, created, data: { object } });
    this.delivered.push({ type, status: res.status });
    return res;
  }

  /** The next period starts and is paid (`invoice.paid`, billing_reason `subscription_cycle`). */
  async renew(subId: string) {
    const sub = this.subscriptions.get(subId);
    if (!sub) throw new Error(`no ${subId}`);
    sub.start = sub.end;
    sub.end = sub.start + MONTH;
    return this.event("invoice.paid", this.invoiceObject(sub, "subscription_cycle"), sub.start);
  }

  /** The period is over: a cancelled subscription ends (`customer.subscription.deleted`). */
  async endPeriod(subId: string) {
    const sub = this.subscriptions.get(subId);
    if (!sub) throw new Error(`no ${subId}`);
    sub.status = "canceled";
    sub.end = nowSec();
    return this.event("customer.subscription.deleted", this.subscriptionObject(sub));
  }
}
