import { type Kysely, sql } from "kysely";
import type { DB } from "../../db/schema.js";
import { mailboxPool } from "../../lib/mailbox.js";
import type { AccountRow } from "../../ports/key-store.js";
import { PLANS, type Plan, type PlanName, planOf } from "./plans.js";

/**
 * The pool whose uses and rate limit an account's keys spend (its row of `account_quotas`). The
 * free allowance is given once per mailbox (`mailbox:` and `mailboxOf(email)`): every address that
 * delivers to one mailbox (`x+1@example.com` is `x@example.com`; dots do not count at Gmail)
 * shares one, whichever accounts sign in with them. A paid plan's uses are the account's own.
 */
export function quotaPool(ownerId: string, email: string, plan: PlanName): string {
  return plan === "free" ? mailboxPool(email) : ownerId;
}

/** The calendar month (UTC) around `at`: the free plan's billing period. */
export function calendarMonth(at: Date): { start: string; end: string } {
  const y = at.getUTCFullYear();
  const m = at.getUTCMonth();
  return { start: new Date(Date.UTC(y, m, 1)).toISOString(), end: new Date(Date.UTC(y, m + 1, 1)).toISOString() };
}

/** An account's uses and their period, as `GET /v1/usage` and the account page show them. */
export interface QuotaPeriod {
  /** Uses left; null = unlimited. */
  remaining: number | null;
  periodStart: string | null;
  periodEnd: string | null;
  /** When the uses refill themselves (free: the next month); null: with the next paid renewal, if any. */
  refillAt: string | null;
}

/** The period fields of a plan's row: free runs by calendar month and refills itself; paid plans follow Stripe. */
function periodOf(plan: Plan, now: Date) {
  if (plan.name !== "free") return { period_start: null, period_end: null, refill_at: null };
  const month = calendarMonth(now);
  return { period_start: month.start, period_end: month.end, refill_at: month.end };
}

/** Uses left under two limits (null = unlimited). */
export const fewer = (a: number | null, b: number | null): number | null =>
  a === null ? b : b === null ? a : Math.min(a, b);

export interface Pool {
  /** The pool (quotaPool): the account on a paid plan, its mailbox on the free one. */
  id: string;
  plan: Plan;
  /** Uses left for the whole pool; null = unlimited. */
  remaining: number | null;
}

/**
 * The uses of a pool (quotaPool: a paid account, or a mailbox's free allowance): one count for all
 * the keys that spend it (rolls included), in `account_quotas`, whatever the key store. Opened
 * once (an insert that does nothing when the row exists) and spent by one conditional UPDATE, so
 * it is exact under concurrency and across instances on SQLite and PostgreSQL, however many
 * accounts of one mailbox sign up and call at once. Every method takes the pool's id.
 */
export class AccountQuotas {
  constructor(
    private readonly db: Kysely<DB>,
    private readonly now: () => Date = () => new Date(),
  ) {}

  /** The pool whose uses `keyId` spends, or undefined for a key made outside the account page. */
  async poolOf(keyId: string): Promise<Pool | undefined> {
    const row = await this.db
      .selectFrom("key_ledger as l")
      .leftJoin("account_quotas as q", "q.owner_id", "l.pool")
      .select(["l.owner_id", "l.pool", "l.plan", "q.owner_id as pooled", "q.remaining"])
      .where("l.key_id", "=", keyId)
      .executeTakeFirst();
    if (!row) return undefined;
    const remaining = row.remaining === null ? null : Number(row.remaining);
    return this.poolFrom({
      ownerId: row.owner_id,
      pool: row.pool,
      plan: row.plan,
      opened: row.pooled !== null,
      remaining,
    });
  }

  /** The pool of an account row a key store read with the key (opening the pool's uses if new). */
  async poolFrom(row: AccountRow | null): Promise<Pool | undefined> {
    if (!row) return undefined;
    const plan = planOf(row.plan);
    if (!row.opened) await this.open(row.pool, plan);
    // Opened just now, or by another account of its mailbox before: read what is left.
    const remaining = row.opened ? row.remaining : await this.remaining(row.pool);
    return { id: row.pool, plan, remaining: remaining === undefined ? plan.quota : remaining };
  }

  /**
   * The embedded store's spend of a pool (its `PoolUses`), in `db` (its transaction) when given:
   * opens it if new, then spends unless it is unlimited.
   */
  async take(row: AccountRow, cost: number, db?: Kysely<DB>): Promise<number | null | undefined> {
    const quotas = db ? new AccountQuotas(db, this.now) : this;
    const pool = await quotas.poolFrom(row);
    if (pool?.remaining == null) return null;
    return quotas.spend(pool.id, cost);
  }

  /**
   * Gives a pool its plan's uses, once (the first key that spends it, or its first use after this
   * table came): a mailbox's second account finds its pool open and gets nothing more.
   */
  async open(ownerId: string, plan: Plan): Promise<void> {
    const now = this.now();
    await this.db
      .insertInto("account_quotas")
      .values({ owner_id: ownerId, remaining: plan.quota, updated_at: now.toISOString(), ...periodOf(plan, now) })
      .onConflict((oc) => oc.column("owner_id").doNothing())
      .execute();
  }

  /**
   * Spends `cost` uses; the uses left, or undefined when fewer than `cost` are left. Uses of a
   * period that is over are never spent: the row refills first (refillDue), then the spend runs again
   * (a refusal costs three statements; a call that passes, one).
   */
  async spend(ownerId: string, cost: number): Promise<number | undefined> {
    const once = async () => {
      const row = await this.db
        .updateTable("account_quotas")
        .set((eb) => ({ remaining: eb("remaining", "-", cost) }))
        .where("owner_id", "=", ownerId)
        .where("remaining", ">=", cost)
        .where((eb) => eb.or([eb("refill_at", "is", null), eb("refill_at", ">", this.now().toISOString())]))
        .returning("remaining")
        .executeTakeFirst();
      return row?.remaining === null || row === undefined ? undefined : Number(row.remaining);
    };
    const left = await once();
    if (left !== undefined) return left;
    // Refused: maybe the month is over. One caller refills; every caller then tries again, so a
    // call that lost the race to refill spends from the new month like the one that won.
    await this.refillDue(ownerId);
    return once();
  }

  /**
   * Starts the new month of an account whose uses refill themselves (free) once its period is
   * over: its uses are set to the plan's (never added to what is left). One conditional UPDATE,
   * so of instances racing at the turn of the month exactly one refills. True when this one did.
   */
  async refillDue(ownerId: string): Promise<boolean> {
    const now = this.now();
    const month = calendarMonth(now);
    const res = await this.db
      .updateTable("account_quotas")
      .set({
        remaining: PLANS.free.quota,
        period_start: month.start,
        period_end: month.end,
        refill_at: month.end,
        updated_at: now.toISOString(),
      })
      .where("owner_id", "=", ownerId)
      .where("refill_at", "<=", now.toISOString())
      .executeTakeFirst();
    return Number(res.numUpdatedRows) > 0;
  }

  /** A paid plan's period, as Stripe's renewal set it. */
  async setPeriod(ownerId: string, start: string, end: string): Promise<void> {
    await this.db
      .updateTable("account_quotas")
      .set({ period_start: start, period_end: end })
      .where("owner_id", "=", ownerId)
      .where("refill_at", "is", null)
      .execute();
  }

  /** The account's uses and period as they stand now (a month that is over shows refilled). */
  async period(ownerId: string): Promise<QuotaPeriod | undefined> {
    const row = await this.db
      .selectFrom("account_quotas")
      .select(["remaining", "period_start", "period_end", "refill_at"])
      .where("owner_id", "=", ownerId)
      .executeTakeFirst();
    if (!row) return undefined;
    const now = this.now();
    if (row.refill_at !== null && row.refill_at <= now.toISOString()) {
      const month = calendarMonth(now);
      return { remaining: PLANS.free.quota, periodStart: month.start, periodEnd: month.end, refillAt: month.end };
    }
    return {
      remaining: row.remaining === null ? null : Number(row.remaining),
      periodStart: row.period_start,
      periodEnd: row.period_end,
      refillAt: row.refill_at,
    };
  }

  /**
   * Gives back uses (a refund); nothing for an unlimited account, nor for a call charged
   * (`chargedAt`) before the account's uses were last set (a plan change: they are the new count).
   * In `db` (a transaction) when given.
   */
  async credit(ownerId: string, uses: number, chargedAt?: string, db: Kysely<DB> = this.db): Promise<void> {
    let q = db
      .updateTable("account_quotas")
      .set((eb) => ({ remaining: eb("remaining", "+", uses) }))
      .where("owner_id", "=", ownerId)
      .where("remaining", "is not", null);
    if (chargedAt !== undefined) q = q.where("updated_at", "<=", chargedAt);
    await q.execute();
  }

  async remaining(ownerId: string): Promise<number | null | undefined> {
    return (await this.period(ownerId))?.remaining;
  }

  /**
   * A plan change: an upgrade (or the same plan again) sets the account's uses to the plan's
   * quota; a downgrade only lowers them (what is left, at most the lower plan's quota). With
   * `email`, only while the account's plan (`account_plans`) is still `plan`.
   */
  async applyPlan(ownerId: string, plan: Plan, downgrade: boolean, email?: string): Promise<number | null> {
    await this.open(ownerId, plan);
    const now = this.now();
    const updated_at = now.toISOString();
    const q = plan.quota;
    let update = this.db
      .updateTable("account_quotas")
      .set((eb) => ({
        updated_at,
        ...periodOf(plan, now),
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
