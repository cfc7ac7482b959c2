import { randomUUID } from "node:crypto";
import type { Kysely, Selectable } from "kysely";
import type { DB } from "../../db/schema.js";
import type { KeyInfo } from "../../ports/key-store.js";
import { inForce, quotaPool } from "./account-quota.js";
import type { Plan, PlanName } from "./plans.js";

export type LedgerRow = Selectable<DB["key_ledger"]>;

export type Reservation =
  | { ok: true; id: string }
  | { ok: false; why: "DUPLICATE_NAME" }
  | { ok: false; why: "KEY_LIMIT"; limit: number }
  | { ok: false; why: "DAILY_LIMIT"; limit: number; retryAfterSec: number };

const DAY_MS = 86_400_000;
/** A reservation whose key never arrived (the process died mid-creation) stops counting after this. */
const IN_FLIGHT_MS = 60_000;

/**
 * The account page's record of the keys each account made, whatever the key store (embedded or
 * Unkey): it enforces the plan's caps and unique names atomically, guards rolls against a double
 * submit, and remembers created / expires / revoked times and the plan of each key.
 */
export class KeyLedger {
  constructor(
    private readonly db: Kysely<DB>,
    private readonly now: () => Date = () => new Date(),
  ) {}

  /**
   * Reserves a key for `ownerId` under `plan`, spending `pool` (quotaPool), or says which cap
   * refuses it. One transaction that first writes the owner's lock row (row lock on PostgreSQL,
   * the write lock on SQLite), so two concurrent creations by one account are counted one after
   * the other, across instances.
   */
  async reserve(
    ownerId: string,
    pool: string,
    name: string,
    plan: Plan,
    expiresAt: string | null,
  ): Promise<Reservation> {
    const now = this.now();
    const nowIso = now.toISOString();
    return this.db.transaction().execute(async (trx) => {
      await trx
        .insertInto("key_owners")
        .values({ owner_id: ownerId, touched_at: nowIso })
        .onConflict((oc) => oc.column("owner_id").doUpdateSet({ touched_at: nowIso }))
        .execute();
      const rows = await trx.selectFrom("key_ledger").selectAll().where("owner_id", "=", ownerId).execute();
      const active = rows.filter((r) => isActive(r, now));
      const wanted = name.toLowerCase();
      if (active.some((r) => r.rolled_at === null && r.name.toLowerCase() === wanted)) {
        return { ok: false, why: "DUPLICATE_NAME" } as const;
      }
      if (active.filter((r) => r.rolled_at === null).length >= plan.maxActiveKeys) {
        return { ok: false, why: "KEY_LIMIT", limit: plan.maxActiveKeys } as const;
      }
      const since = now.getTime() - DAY_MS;
      const recent = rows
        .filter((r) => Date.parse(r.created_at) > since && !r.id.startsWith("roll_"))
        .map((r) => Date.parse(r.created_at))
        .sort((a, b) => a - b);
      if (recent.length >= plan.creationsPerDay) {
        const oldest = recent[recent.length - plan.creationsPerDay] ?? now.getTime();
        const retryAfterSec = Math.max(1, Math.ceil((oldest + DAY_MS - now.getTime()) / 1000));
        return { ok: false, why: "DAILY_LIMIT", limit: plan.creationsPerDay, retryAfterSec } as const;
      }
      const id = `res_${randomUUID()}`;
      await trx
        .insertInto("key_ledger")
        .values({
          id,
          key_id: null,
          owner_id: ownerId,
          name,
          plan: plan.name,
          created_at: nowIso,
          expires_at: expiresAt,
          revoked_at: null,
          rolled_at: null,
          pool,
        })
        .execute();
      // The account's other keys on this plan spend the same pool (rows written before pools were per mailbox).
      await trx
        .updateTable("key_ledger")
        .set({ pool })
        .where("owner_id", "=", ownerId)
        .where("plan", "=", plan.name)
        .where("pool", "<>", pool)
        .execute();
      return { ok: true, id } as const;
    });
  }

  async confirm(reservationId: string, keyId: string): Promise<void> {
    await this.db.updateTable("key_ledger").set({ key_id: keyId }).where("id", "=", reservationId).execute();
  }

  async cancel(reservationId: string): Promise<void> {
    await this.db.deleteFrom("key_ledger").where("id", "=", reservationId).execute();
  }

  /**
   * Marks `keyId` as rolled (once: a second submit finds it rolled and gets false). With a grace
   * period the old key expires then; without, it is revoked now.
   */
  async beginRoll(ownerId: string, keyId: string, graceSec: number): Promise<boolean> {
    const now = this.now();
    const end = new Date(now.getTime() + graceSec * 1000).toISOString();
    const res = await this.db
      .updateTable("key_ledger")
      .set(
        graceSec > 0
          ? { rolled_at: now.toISOString(), expires_at: end }
          : { rolled_at: now.toISOString(), revoked_at: now.toISOString() },
      )
      .where("owner_id", "=", ownerId)
      .where("key_id", "=", keyId)
      .where("rolled_at", "is", null)
      .where("revoked_at", "is", null)
      .executeTakeFirst();
    return Number(res.numUpdatedRows) > 0;
  }

  async undoRoll(ownerId: string, keyId: string, before: LedgerRow): Promise<void> {
    await this.db
      .updateTable("key_ledger")
      .set({ rolled_at: null, revoked_at: before.revoked_at, expires_at: before.expires_at })
      .where("owner_id", "=", ownerId)
      .where("key_id", "=", keyId)
      .execute();
  }

  /** Records the replacement a roll issued (`old`: the row before the roll; not a creation for the daily cap). */
  async addReplacement(old: LedgerRow, keyId: string): Promise<void> {
    await this.db
      .insertInto("key_ledger")
      .values({
        id: `roll_${randomUUID()}`,
        key_id: keyId,
        owner_id: old.owner_id,
        name: old.name,
        plan: old.plan,
        created_at: this.now().toISOString(),
        expires_at: old.expires_at,
        revoked_at: null,
        rolled_at: null,
        revoked_reason: null,
        pool: old.pool,
      })
      .execute();
  }

  /** A rolled key whose replacement was revoked: it counts toward the active-key cap again. */
  async countAgain(keyId: string): Promise<void> {
    await this.db.updateTable("key_ledger").set({ rolled_at: null }).where("key_id", "=", keyId).execute();
  }

  /** `reason`: why the account page revoked it (`plan`: over a lower plan's cap), null when asked to. */
  async markRevoked(keyId: string, reason: string | null = null): Promise<void> {
    await this.db
      .updateTable("key_ledger")
      .set({ revoked_at: this.now().toISOString(), revoked_reason: reason })
      .where("key_id", "=", keyId)
      .where("revoked_at", "is", null)
      .execute();
  }

  /** A renamed key, or a new expiry (the caps and unique names follow). */
  async edited(keyId: string, patch: { name?: string; expiresAt?: string | null }): Promise<void> {
    const set = {
      ...(patch.name !== undefined && { name: patch.name }),
      ...(patch.expiresAt !== undefined && { expires_at: patch.expiresAt }),
    };
    if (Object.keys(set).length === 0) return;
    await this.db.updateTable("key_ledger").set(set).where("key_id", "=", keyId).execute();
  }

  /** Brings the ledger in line with the store (a key revoked or expired by the operator). */
  async reconcile(ownerId: string, keys: KeyInfo[]): Promise<void> {
    const gone = keys.filter((k) => k.status === "revoked").map((k) => k.id);
    if (gone.length === 0) return;
    await this.db
      .updateTable("key_ledger")
      .set({ revoked_at: this.now().toISOString() })
      .where("owner_id", "=", ownerId)
      .where("key_id", "in", gone)
      .where("revoked_at", "is", null)
      .where("rolled_at", "is", null)
      .execute();
  }

  async forOwner(ownerId: string): Promise<LedgerRow[]> {
    return this.db.selectFrom("key_ledger").selectAll().where("owner_id", "=", ownerId).execute();
  }

  async byKeyId(keyId: string): Promise<LedgerRow | undefined> {
    return this.db.selectFrom("key_ledger").selectAll().where("key_id", "=", keyId).executeTakeFirst();
  }

  /** The owner's usable keys that were not rolled (those the active-key cap counts), newest first. */
  async currentKeyIds(ownerId: string): Promise<string[]> {
    const now = this.now();
    return (await this.forOwner(ownerId))
      .filter((r) => r.key_id !== null && r.rolled_at === null && isActive(r, now))
      .sort((a, b) => b.created_at.localeCompare(a.created_at))
      .map((r) => r.key_id as string);
  }

  /** Puts the account's keys on `plan` and its pool, only while the account's plan (`account_plans`) is still `plan`. */
  async setPlan(ownerId: string, plan: PlanName, email: string): Promise<void> {
    await this.db
      .updateTable("key_ledger")
      .set({ plan, pool: quotaPool(ownerId, email, plan) })
      .where("owner_id", "=", ownerId)
      .where(inForce(email.toLowerCase(), plan))
      .execute();
  }
}

function isActive(r: LedgerRow, now: Date): boolean {
  if (r.revoked_at !== null) return false;
  if (r.expires_at !== null && Date.parse(r.expires_at) <= now.getTime()) return false;
  if (r.key_id === null && now.getTime() - Date.parse(r.created_at) > IN_FLIGHT_MS) return false;
  return true;
}
