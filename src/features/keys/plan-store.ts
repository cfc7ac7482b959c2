import { type Kysely, sql } from "kysely";
import type { DB } from "../../db/schema.js";
import { DEFAULT_PLAN, isPlanName, type PlanName } from "./plans.js";

export interface PlanGrant {
  email: string;
  plan: PlanName;
  source: string;
  reference: string | null;
  updatedAt: string;
}

/** Plans per account e-mail address (lower case), so a purchase may come before the first sign-in. */
export class PlanStore {
  constructor(
    private readonly db: Kysely<DB>,
    private readonly now: () => Date = () => new Date(),
  ) {}

  async planFor(email: string): Promise<PlanName> {
    const row = await this.db
      .selectFrom("account_plans")
      .select("plan")
      .where("email", "=", email.toLowerCase())
      .executeTakeFirst();
    return isPlanName(row?.plan) ? row.plan : DEFAULT_PLAN;
  }

  /**
   * Puts `email` on `plan`. A purchase (`purchasedAt`: when Stripe made it) is applied only if no
   * later purchase is in force (one conditional upsert, so concurrent deliveries cannot both win);
   * null when a later one is. An operator's grant always applies and leaves that time as it is.
   */
  async grant(
    email: string,
    plan: PlanName,
    source: string,
    reference: string | null = null,
    purchasedAt?: string,
  ): Promise<PlanGrant | null> {
    const row = {
      email: email.toLowerCase(),
      plan,
      source,
      reference,
      updated_at: this.now().toISOString(),
      purchased_at: purchasedAt ?? null,
    };
    const res = await this.db
      .insertInto("account_plans")
      .values(row)
      .onConflict((oc) => {
        const update = oc.column("email").doUpdateSet({
          plan,
          source,
          reference,
          updated_at: row.updated_at,
          ...(purchasedAt !== undefined && { purchased_at: purchasedAt }),
        });
        return purchasedAt === undefined
          ? update
          : update.where(
              sql<boolean>`account_plans.purchased_at is null or account_plans.purchased_at <= ${purchasedAt}`,
            );
      })
      .executeTakeFirst();
    if (Number(res.numInsertedOrUpdatedRows ?? 0n) === 0) return null;
    return { email: row.email, plan, source, reference, updatedAt: row.updated_at };
  }

  async list(): Promise<PlanGrant[]> {
    const rows = await this.db.selectFrom("account_plans").selectAll().orderBy("email").execute();
    return rows.map((r) => ({
      email: r.email,
      plan: isPlanName(r.plan) ? r.plan : DEFAULT_PLAN,
      source: r.source,
      reference: r.reference,
      updatedAt: r.updated_at,
    }));
  }

  /** True the first time an event id is seen (webhook deliveries are retried). */
  async firstDelivery(id: string, type: string): Promise<boolean> {
    const res = await this.db
      .insertInto("billing_events")
      .values({ id, type, received_at: this.now().toISOString() })
      .onConflict((oc) => oc.column("id").doNothing())
      .executeTakeFirst();
    return Number(res.numInsertedOrUpdatedRows ?? 0n) > 0;
  }

  /** Forgets an event whose effect failed, so Stripe's retry applies it. */
  async forgetDelivery(id: string): Promise<void> {
    await this.db.deleteFrom("billing_events").where("id", "=", id).execute();
  }

  /**
   * The account (better-auth's user) that signed in with `email`, or null: none did, or
   * better-auth's tables do not exist yet (no one has signed in on this database).
   */
  async userIdFor(email: string): Promise<string | null> {
    try {
      const { rows } = await sql<{
        id: string;
      }>`select id from auth_user where lower(email) = ${email.toLowerCase()}`.execute(this.db);
      return rows[0]?.id ?? null;
    } catch {
      return null;
    }
  }

  async emailFor(userId: string): Promise<string | null> {
    try {
      const { rows } = await sql<{ email: string }>`select email from auth_user where id = ${userId}`.execute(this.db);
      return rows[0]?.email ?? null;
    } catch {
      return null;
    }
  }
}
