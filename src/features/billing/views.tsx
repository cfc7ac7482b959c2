import type { PlanName } from "../keys/index.js";
import { day, type PlanCard, priceText } from "./catalog.js";
import type { BillingView } from "./view-model.js";

const uses = (n: number | null) => (n === null ? "unlimited" : n.toLocaleString("en"));

function BuyButton(props: { card: PlanCard; csrf?: string; subscribed: boolean }) {
  const name = props.card.plan.name;
  // Signed out (the home page): the account page, which signs in first and offers the same button.
  if (props.csrf === undefined) {
    return (
      <form method="get" action="/account" class="inline">
        <input type="hidden" name="buy" value={name} />
        <button type="submit">Buy {name}</button>
      </form>
    );
  }
  // A subscriber changes plan in Stripe's Customer Portal (one subscription per account).
  return (
    <form
      method="post"
      action={props.subscribed ? "/account/billing/portal" : "/account/billing/checkout"}
      class="inline"
    >
      <input type="hidden" name="csrf" value={props.csrf} />
      <input type="hidden" name="plan" value={name} />
      <button type="submit">
        {props.subscribed ? "Change to" : "Buy"} {name}
      </button>
    </form>
  );
}

/** The plans with their limits and prices; a Buy button on each paid plan when purchase is configured. */
export function PlansTable(props: {
  cards: PlanCard[];
  configured: boolean;
  current?: PlanName;
  csrf?: string;
  subscribed?: boolean;
  /** `?buy=pro` from the home page: that plan's row is marked. */
  chosen?: string;
}) {
  return (
    <section aria-labelledby="plans-title" id="plans">
      <h2 id="plans-title">Plans</h2>
      <table class="plans">
        <thead>
          <tr>
            <th scope="col">Plan</th>
            <th scope="col">Price</th>
            <th scope="col">Uses</th>
            <th scope="col">Rate limit</th>
            <th scope="col">Active keys</th>
            <th scope="col">Buy</th>
          </tr>
        </thead>
        <tbody>
          {props.cards.map((card) => {
            const p = card.plan;
            const paid = p.name !== "free";
            return (
              <tr class={props.chosen === p.name ? "chosen" : undefined} data-plan={p.name}>
                <th scope="row">{p.name}</th>
                <td>{!paid ? "free" : card.price ? priceText(card.price) : "—"}</td>
                <td>
                  {uses(p.quota)} {paid ? "per billing period" : "per calendar month"}
                </td>
                <td>
                  {p.ratelimit.limit} calls / {p.ratelimit.durationSec} s
                </td>
                <td>{p.maxActiveKeys}</td>
                <td>
                  {props.current === p.name ? (
                    <strong>Your plan</strong>
                  ) : paid && props.configured ? (
                    <BuyButton card={card} csrf={props.csrf} subscribed={props.subscribed ?? false} />
                  ) : null}
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
      {!props.configured && (
        <p class="hint">Purchase is not configured on this server yet: the operator can grant a plan meanwhile.</p>
      )}
      {props.configured && (
        <p class="hint">Payments are handled by Stripe. Cancel any time; the plan runs to the end of its period.</p>
      )}
    </section>
  );
}

/** The account's subscription: state, renewal, last payment, notices, and Manage billing. */
export function BillingSection(props: { view: BillingView; csrf: string }) {
  const v = props.view;
  const s = v.subscription;
  return (
    <section aria-labelledby="billing-title" class="billing">
      <h2 id="billing-title">Billing</h2>
      {v.checkout === "pending" && (
        <p class="notice ok" role="status" aria-live="polite">
          Thank you: Stripe is confirming your purchase. This page updates by itself.
        </p>
      )}
      {v.checkout === "slow" && (
        <p class="notice error" role="status">
          Stripe has not confirmed your purchase yet. It applies here as soon as Stripe does; nothing is charged twice.
          Reload this page in a few minutes.
        </p>
      )}
      {v.checkout === "confirmed" && (
        <p class="notice ok" role="status">
          Your purchase is confirmed: you are on {v.plan}.
        </p>
      )}
      {v.checkout === "cancelled" && (
        <p class="notice ok" role="status">
          Checkout was cancelled: nothing was charged.
        </p>
      )}
      {s?.paymentFailedAt && (
        <p class="notice error" role="alert">
          Your last payment failed on {s.paymentFailedAt.slice(0, 10)}. Stripe will try again; update your card under
          Manage billing. Your plan stays meanwhile.
        </p>
      )}
      <p>
        Plan <strong data-testid="plan-name">{v.plan}</strong>
        {s?.renewsOn && <> · renews on {s.renewsOn}</>}
        {s?.endsOn && (
          <>
            {" "}
            · cancelled: ends on <span data-testid="plan-ends">{s.endsOn}</span>, then free
          </>
        )}
        {s?.changesOn && (
          <>
            {" "}
            · moves to {s.nextPlan} on {s.changesOn}
          </>
        )}
      </p>
      {v.quota && (
        <p data-testid="quota">
          This period
          {v.quota.periodStart && v.quota.periodEnd && ` (${day(v.quota.periodStart)} to ${day(v.quota.periodEnd)})`}:{" "}
          <strong>{uses(v.quota.remaining)}</strong> uses left
          {v.quota.refillsOn && !s?.endsOn && <>; they refill to the plan's on {v.quota.refillsOn}</>}.
        </p>
      )}
      {s?.lastPayment && <p>Last payment: {s.lastPayment}.</p>}
      {v.manageable && (
        <form method="post" action="/account/billing/portal" class="inline">
          <input type="hidden" name="csrf" value={props.csrf} />
          <button type="submit">Manage billing</button>
        </form>
      )}
    </section>
  );
}
