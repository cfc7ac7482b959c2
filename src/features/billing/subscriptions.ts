import type { Kysely, Selectable } from "kysely";
import type { DB } from "../../db/schema.js";

export type SubscriptionRow = Selectable<DB["billing_subscriptions"]>;

/** What one event says of a subscription's state; fields left out stay as they are. */
export type SubscriptionState = Partial<
  Pick<
    SubscriptionRow,
    | "customer_id"
    | "subscription_id"
    | "plan"
    | "status"
    | "period_start"
    | "period_end"
    | "cancel_at_period_end"
    | "next_plan"
    | "payment_failed_at"
    | "checkout_session"
  >
>;

const EMPTY = {
  customer_id: null,
  subscription_id: null,
  period_start: null,
  period_end: null,
  cancel_at_period_end: 0,
  next_plan: null,
  payment_failed_at: null,
  last_payment_amount: null,
  last_payment_currency: null,
  last_payment_at: null,
  checkout_session: null,
};

/**
 * Each account's Stripe subscription, as its signed events left it. Stripe delivers events in
 * any order: a state change applies only when its event is not older than the newest one applied
 * (`state_at`, the event's `created`), by one conditional upsert, so a late or racing delivery
 * never undoes a newer one.
 */
export class SubscriptionStore {
  constructor(
    private readonly db: Kysely<DB>,
    private readonly now: () => Date,
  ) {}

  get(accountId: string): Promise<SubscriptionRow | undefined> {
    return this.db
      .selectFrom("billing_subscriptions")
      .selectAll()
      .where("account_id", "=", accountId)
      .executeTakeFirst();
  }

  byCustomer(customerId: string): Promise<SubscriptionRow | undefined> {
    return this.db
      .selectFrom("billing_subscriptions")
      .selectAll()
      .where("customer_id", "=", customerId)
      .executeTakeFirst();
  }

  /** Applies `state` made at `createdSec` unless a newer event was applied; false when it was. */
  async apply(
    accountId: string,
    email: string,
    createdSec: number,
    state: SubscriptionState & { plan: string; status: string },
  ): Promise<boolean> {
    const updated_at = this.now().toISOString();
    const res = await this.db
      .insertInto("billing_subscriptions")
      .values({
        ...EMPTY,
        account_id: accountId,
        email: email.toLowerCase(),
        state_at: createdSec,
        updated_at,
        ...state,
      })
      .onConflict((oc) =>
        oc
          .column("account_id")
          .doUpdateSet({ ...state, state_at: createdSec, updated_at })
          .where("billing_subscriptions.state_at", "<=", createdSec),
      )
      .executeTakeFirst();
    return Number(res.numInsertedOrUpdatedRows ?? 0n) > 0;
  }

  /** Changes fields of an existing subscription only (no ordering: payments and notices). */
  async patch(accountId: string, fields: Partial<SubscriptionRow>): Promise<void> {
    await this.db
      .updateTable("billing_subscriptions")
      .set({ ...fields, updated_at: this.now().toISOString() })
      .where("account_id", "=", accountId)
      .execute();
  }

  /** Moves `row` on to `fields` unless something changed it since it was read: true for one caller only. */
  async settle(row: SubscriptionRow, fields: Partial<SubscriptionRow>): Promise<boolean> {
    const res = await this.db
      .updateTable("billing_subscriptions")
      .set({ ...fields, updated_at: this.now().toISOString() })
      .where("account_id", "=", row.account_id)
      .where("state_at", "=", row.state_at)
      .where("plan", "=", row.plan)
      .where("updated_at", "=", row.updated_at)
      .executeTakeFirst();
    return Number(res.numUpdatedRows) > 0;
  }

  /** Subscriptions whose period is over with a change due (a cancellation or a downgrade). */
  due(nowIso: string): Promise<SubscriptionRow[]> {
    return this.db
      .selectFrom("billing_subscriptions")
      .selectAll()
      .where("period_end", "<=", nowIso)
      .where((eb) => eb.or([eb("cancel_at_period_end", "=", 1), eb("next_plan", "is not", null)]))
      .where("plan", "!=", "free")
      .execute();
  }
}
