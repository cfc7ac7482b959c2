import { type Kysely, sql } from "kysely";
import type { DB } from "../../db/schema.js";
import type { AccountRow } from "../../ports/key-store.js";
import { type Plan, planOf } from "./plans.js";

/** Uses left under two limits (null = unlimited). */
export const fewer = (a: number | null, b: number | null): number | null =>
  a === null ? b : b === null ? a : Math.min(a, b);

export interface Pool {
  ownerId: string;
  plan: Plan;
  /** Uses left for the whole account; null = unlimited. */
  remaining: number | null;
}

/**
 * The uses of an account: one count for all the keys it made on the account page (rolls
 * included), in `account_quotas`, whatever the key store. Spent by one conditional UPDATE, so it
 * is exact under concurrency and across instances on SQLite and PostgreSQL.
 */
export class AccountQuotas {
  constructor(
    private readonly db: Kysely<DB>,
    private readonly now: () => Date = () => new Date(),
  ) {}

  /** The account whose uses `keyId` spends, or undefined for a key made outside the account page. */
  async poolOf(keyId: string): Promise<Pool | undefined> {
    const row = await this.db
      .selectFrom("key_ledger as l")
      .leftJoin("account_quotas as q", "q.owner_id", "l.owner_id")
      .select(["l.owner_id", "l.plan", "q.owner_id as pooled", "q.remaining"])
      .where("l.key_id", "=", keyId)
      .executeTakeFirst();
    if (!row) return undefined;
    const remaining = row.remaining === null ? null : Number(row.remaining);
    return this.poolFrom({ ownerId: row.owner_id, plan: row.plan, opened: row.pooled !== null, remaining });
  }

  /** The pool of an account row a key store read with the key (opening the account's uses if new). */
  async poolFrom(row: AccountRow | null): Promise<Pool | undefined> {
    if (!row) return undefined;
    const plan = planOf(row.plan);
    if (!row.opened) await this.open(row.ownerId, plan);
    return { ownerId: row.ownerId, plan, remaining: row.opened ? row.remaining : plan.quota };
  }

  /** Gives an account its plan's uses, once (its first key, or its first use after this table came). */
  async open(ownerId: string, plan: Plan): Promise<void> {
    await this.db
      .insertInto("account_quotas")
      .values({ owner_id: ownerId, remaining: plan.quota, updated_at: this.now().toISOString() })
      .onConflict((oc) => oc.column("owner_id").doNothing())
      .execute();
  }

  /** Spends `cost` uses; the uses left, or undefined when fewer than `cost` are left. */
  async spend(ownerId: string, cost: number): Promise<number | undefined> {
    const row = await this.db
      .updateTable("account_quotas")
      .set((eb) => ({ remaining: eb("remaining", "-", cost) }))
      .where("owner_id", "=", ownerId)
      .where("remaining", ">=", cost)
      .returning("remaining")
      .executeTakeFirst();
    return row?.remaining === null || row === undefined ? undefined : Number(row.remaining);
  }

  /**
   * Gives back uses (a refund); nothing for an unlimited account, nor for a call charged
   * (`chargedAt`) before the account's uses were last set (a plan change: they are the new count).
   */
  async credit(ownerId: string, uses: number, chargedAt?: string): Promise<void> {
    let q = this.db
      .updateTable("account_quotas")
      .set((eb) => ({ remaining: eb("remaining", "+", uses) }))
      .where("owner_id", "=", ownerId)
      .where("remaining", "is not", null);
    if (chargedAt !== undefined) q = q.where("updated_at", "<=", chargedAt);
    await q.execute();
  }

  async remaining(ownerId: string): Promise<number | null | undefined> {
    const row = await this.db
      .selectFrom("account_quotas")
      .select("remaining")
      .where("owner_id", "=", ownerId)
      .executeTakeFirst();
    return row === undefined ? undefined : row.remaining === null ? null : Number(row.remaining);
  }

  /**
   * A plan change: an upgrade (or the same plan again) sets the account's uses to the plan's
   * quota; a downgrade only lowers them (what is left, at most the lower plan's quota). With
   * `email`, only while the account's plan (`account_plans`) is still `plan`.
   */
  async applyPlan(ownerId: string, plan: Plan, downgrade: boolean, email?: string): Promise<number | null> {
    await this.open(ownerId, plan);
    const updated_at = this.now().toISOString();
    const q = plan.quota;
    let update = this.db
      .updateTable("account_quotas")
      .set((eb) => ({
        updated_at,
        remaining:
          !downgrade || q === null
            ? q
            : eb
                .case()
                .when("remaining", "is", null)
                .then(q)
                .when("remaining", ">", q)
                .then(q)
                .else(eb.ref("remaining"))
                .end(),
      }))
      .where("owner_id", "=", ownerId);
    // Only while `plan` is still the account's: a concurrent grant that replaced it sets its own.
    if (email !== undefined) update = update.where(inForce(email.toLowerCase(), plan.name));
    await update.execute();
    return (await this.remaining(ownerId)) ?? null;
  }
}

/** The condition "`email`'s plan in force is `plan`" (a concurrent grant may have replaced it). */
export function inForce(email: string, plan: string) {
  return sql<boolean>`exists (select 1 from account_plans p where p.email = ${email} and p.plan = ${plan})`;
}
