import type { Kysely } from "kysely";
import { sha256Hex } from "../lib/hash.js";
import type { IdempotencyBegin, IdempotencyStore } from "../ports/idempotency.js";
import type { DB } from "./schema.js";

const TTL_MS = 24 * 60 * 60 * 1000;

export const hashBody = sha256Hex;

/**
 * Stored `Idempotency-Key` outcomes (24 h), in the database so they hold across instances.
 * `begin` claims the key atomically (primary key insert); the first request then `complete`s
 * it with its answer, or `abandon`s it when it failed so a retry can run again.
 */
export class SqlIdempotencyStore implements IdempotencyStore {
  constructor(
    private readonly db: Kysely<DB>,
    private readonly now: () => number = Date.now,
  ) {}

  async begin(scope: string, key: string, bodyHash: string): Promise<IdempotencyBegin> {
    const created_at = new Date(this.now()).toISOString();
    const expired = new Date(this.now() - TTL_MS).toISOString();
    await this.db
      .deleteFrom("idempotency")
      .where("scope", "=", scope)
      .where("key", "=", key)
      .where("created_at", "<", expired)
      .execute();
    const inserted = await this.db
      .insertInto("idempotency")
      .values({ scope, key, body_hash: bodyHash, status: 0, response: null, created_at })
      .onConflict((oc) => oc.doNothing())
      .executeTakeFirst();
    if (Number(inserted.numInsertedOrUpdatedRows ?? 0) > 0) return { kind: "new" };
    const row = await this.db
      .selectFrom("idempotency")
      .select(["body_hash", "status", "response"])
      .where("scope", "=", scope)
      .where("key", "=", key)
      .executeTakeFirst();
    if (!row) return this.begin(scope, key, bodyHash); // expired and removed meanwhile
    if (row.body_hash !== bodyHash) return { kind: "mismatch" };
    if (row.status === 0 || row.response === null) return { kind: "in_progress" };
    return { kind: "replay", status: row.status, body: row.response };
  }

  /**
   * What `begin` would find, without claiming anything (no write): lets a caller decide before
   * authentication is complete whether a request is a replay. Expired entries count as absent.
   */
  async peek(scope: string, key: string, bodyHash: string): Promise<Exclude<IdempotencyBegin, { kind: "new" }> | null> {
    const row = await this.db
      .selectFrom("idempotency")
      .select(["body_hash", "status", "response", "created_at"])
      .where("scope", "=", scope)
      .where("key", "=", key)
      .executeTakeFirst();
    if (!row || row.created_at < new Date(this.now() - TTL_MS).toISOString()) return null;
    if (row.body_hash !== bodyHash) return { kind: "mismatch" };
    if (row.status === 0 || row.response === null) return { kind: "in_progress" };
    return { kind: "replay", status: row.status, body: row.response };
  }

  async complete(scope: string, key: string, status: number, body: string): Promise<void> {
    await this.db
      .updateTable("idempotency")
      .set({ status, response: body })
      .where("scope", "=", scope)
      .where("key", "=", key)
      .execute();
  }

  async abandon(scope: string, key: string): Promise<void> {
    await this.db.deleteFrom("idempotency").where("scope", "=", scope).where("key", "=", key).execute();
  }
}
