import { randomBytes } from "node:crypto";
import type { ExpressionBuilder, Kysely } from "kysely";
import type { IdempotencyClaim, IdempotencyRef, IdempotencyStore } from "../ports/idempotency.js";
import type { Expiry } from "./expired-rows.js";
import type { DB } from "./schema.js";

/** How long a completed `Idempotency-Key` answer is kept: the key is free again after it. */
export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;
/**
 * Claims older than that are as if they were not there (`claim` deletes one it meets); the
 * expired-rows sweep deletes the rest, which would otherwise stay forever (a key never sent again).
 */
export const IDEMPOTENCY_EXPIRY: Expiry = {
  name: "idempotency",
  table: "idempotency",
  column: "created_at",
  keepMs: IDEMPOTENCY_TTL_MS,
};
/** Rounds of "insert lost, but the row vanished before it was read" before giving up (never seen twice). */
const MAX_ROUNDS = 5;

const newOwner = () => randomBytes(12).toString("hex");

type Eb = ExpressionBuilder<DB, "idempotency">;
/** The row of `ref`. */
const at = (ref: IdempotencyRef) => (eb: Eb) => eb.and([eb("scope", "=", ref.scope), eb("key", "=", ref.key)]);
/** The row of `ref` while it is still running under `owner`: a stale owner never touches a claim taken over. */
const heldBy = (ref: IdempotencyRef, owner: string) => (eb: Eb) =>
  eb.and([at(ref)(eb), eb("owner", "=", owner), eb("status", "=", 0)]);

/**
 * Records on `ref`'s claim, while `owner` still holds it, whether it holds a charge for its call:
 * one UPDATE, run in `db` (the key store runs it in the transaction that spends the uses).
 */
export function markChargedIn(db: Kysely<DB>, ref: IdempotencyRef, owner: string, charged: boolean) {
  return db
    .updateTable("idempotency")
    .where(heldBy(ref, owner))
    .set({ charged: charged ? 1 : 0 });
}

/**
 * Extends `ref`'s lease to `leaseUntil` (ISO) while `owner` still holds it: one UPDATE, run in `db`
 * (a transaction that writes only while the claim is its holder's: it takes the claim's row first).
 */
export function renewIn(db: Kysely<DB>, ref: IdempotencyRef, owner: string, leaseUntil: string) {
  return db.updateTable("idempotency").where(heldBy(ref, owner)).set({ lease_until: leaseUntil });
}

/**
 * `Idempotency-Key` claims and outcomes (24 h) in the database, so they hold across instances.
 * A claim is one row per (scope, key), created by `INSERT … ON CONFLICT DO NOTHING`: on SQLite
 * and PostgreSQL exactly one of any number of concurrent inserts wins. Its `owner` (a random id)
 * guards every later write, and `lease_until` (ISO time) says how long the owner holds it; a
 * claim still running (status 0) whose lease has passed is taken over by one compare-and-set on
 * (owner, lease_until). Rows from before leases existed (no lease) count as lapsed.
 */
export class SqlIdempotencyStore implements IdempotencyStore {
  constructor(
    private readonly db: Kysely<DB>,
    private readonly now: () => number = Date.now,
  ) {}

  async claim(ref: IdempotencyRef, bodyHash: string, leaseMs: number): Promise<IdempotencyClaim> {
    const nowMs = this.now();
    const nowIso = new Date(nowMs).toISOString();
    const lease_until = new Date(nowMs + leaseMs).toISOString();
    const keptSince = new Date(nowMs - IDEMPOTENCY_TTL_MS).toISOString();
    for (let round = 0; round < MAX_ROUNDS; round++) {
      const owner = newOwner();
      const inserted = await this.db.executeQuery(
        this.db
          .insertInto("idempotency")
          .values({
            scope: ref.scope,
            key: ref.key,
            body_hash: bodyHash,
            status: 0,
            response: null,
            created_at: nowIso,
            owner,
            lease_until,
          })
          .onConflict((oc) => oc.doNothing()),
      );
      if (Number(inserted.numAffectedRows ?? 0) > 0) return { kind: "owned", owner, takeover: false, charged: false };
      const [row] = (
        await this.db.executeQuery(
          this.db
            .selectFrom("idempotency")
            .where(at(ref))
            .select(["body_hash", "status", "response", "owner", "lease_until", "created_at", "charged"]),
        )
      ).rows;
      if (!row) continue; // released or expired between the insert and the read
      if (row.created_at < keptSince) {
        // Kept 24 hours: an older row is as if it were not there (whoever deletes it, claim again).
        await this.db.deleteFrom("idempotency").where(at(ref)).where("created_at", "<", keptSince).execute();
        continue;
      }
      if (row.body_hash !== bodyHash) return { kind: "mismatch" };
      if (row.status !== 0 && row.response !== null) return { kind: "replay", status: row.status, body: row.response };
      if (row.lease_until !== null && row.lease_until > nowIso) return { kind: "in_progress" };
      const taken = await this.db
        .updateTable("idempotency")
        .where(at(ref))
        .set({ owner, lease_until })
        .where("status", "=", 0)
        .where((eb) =>
          eb.and([
            row.owner === null ? eb("owner", "is", null) : eb("owner", "=", row.owner),
            eb.or([eb("lease_until", "is", null), eb("lease_until", "<=", nowIso)]),
            // As read: a charge recorded or taken back meanwhile is looked at again.
            eb("charged", "=", row.charged),
          ]),
        )
        .executeTakeFirst();
      if (Number(taken.numUpdatedRows) > 0) return { kind: "owned", owner, takeover: true, charged: row.charged === 1 };
      // Another request took it over (or it was completed or renewed) meanwhile: look again.
    }
    return { kind: "in_progress" };
  }

  async renew(ref: IdempotencyRef, owner: string, leaseMs: number): Promise<boolean> {
    const res = await renewIn(this.db, ref, owner, new Date(this.now() + leaseMs).toISOString()).executeTakeFirst();
    return Number(res.numUpdatedRows) > 0;
  }

  async complete(ref: IdempotencyRef, owner: string, status: number, body: string): Promise<void> {
    await this.db.executeQuery(
      this.db.updateTable("idempotency").where(heldBy(ref, owner)).set({ status, response: body, lease_until: null }),
    );
  }

  async release(ref: IdempotencyRef, owner: string): Promise<void> {
    await this.db.deleteFrom("idempotency").where(heldBy(ref, owner)).execute();
  }

  async markCharged(ref: IdempotencyRef, owner: string, charged: boolean): Promise<boolean> {
    const res = await this.db.executeQuery(markChargedIn(this.db, ref, owner, charged));
    return Number(res.numAffectedRows ?? 0) > 0;
  }

  async lapse(ref: IdempotencyRef, owner: string): Promise<void> {
    await this.db
      .updateTable("idempotency")
      .where(heldBy(ref, owner))
      .set({ lease_until: new Date(0).toISOString() })
      .execute();
  }
}
