import { type Kysely, type Selectable, sql } from "kysely";
import { isConnectionFailure } from "../../db/connection-failure.js";
import type { DB } from "../../db/schema.js";
import type {
  CreatedKey,
  CreateKeyInput,
  KeyInfo,
  KeyLimits,
  KeyStore,
  KeyVerification,
  RollOptions,
  VerifyOptions,
} from "../../ports/key-store.js";
import type { RateLimiter } from "../../ports/rate-limiter.js";
import { displayParts, generateKey, hashKey, hasPermission, KEY_PREFIX, keyStatus, newKeyId } from "./material.js";

type Row = Selectable<DB["api_keys"]>;

/** `last_used_at` of unlimited keys is refreshed at most this often (it would be a write per call). */
const LAST_USED_PRECISION_MS = 60_000;

/**
 * Keys in the project's database (SQLite or PostgreSQL), stored only as SHA-256 and looked up
 * by hash. Gives Unkey's verdicts. Remaining uses are spent by one conditional UPDATE, so they
 * are exact under concurrency and across instances; per-key rate limits go through the shared
 * limiter (rule `key`, Redis when configured).
 */
export class EmbeddedKeyStore implements KeyStore {
  constructor(
    private readonly db: Kysely<DB>,
    private readonly limiter: RateLimiter,
    private readonly now: () => Date = () => new Date(),
  ) {}

  async verify(key: string, permission?: string, opts: VerifyOptions = {}): Promise<KeyVerification> {
    try {
      return await this.check(key, permission, opts.cost ?? 1);
    } catch (err) {
      // Only "the database cannot answer now" is an outage; anything else is a bug, thrown so
      // that it is logged and answered as 500 instead of hiding behind a 503.
      if (!isConnectionFailure(err)) throw err;
      return { kind: "unavailable", detail: `embedded key store: ${(err as Error).message}` };
    }
  }

  private async check(key: string, permission: string | undefined, cost: number): Promise<KeyVerification> {
    if (!key.startsWith(`${KEY_PREFIX}_`) || key.length > 128) return { kind: "verdict", code: "NOT_FOUND" };
    const row = await this.db
      .selectFrom("api_keys")
      .selectAll()
      .where("key_hash", "=", hashKey(key))
      .executeTakeFirst();
    if (!row) return { kind: "verdict", code: "NOT_FOUND" };
    const base = { kind: "verdict" as const, keyId: row.id, ownerId: row.owner_id, remaining: row.remaining };
    const now = this.now();
    if (row.revoked_at !== null) return { ...base, code: "DISABLED" };
    if (row.expires_at !== null && Date.parse(row.expires_at) <= now.getTime()) return { ...base, code: "EXPIRED" };
    if (permission !== undefined && !hasPermission(parsePermissions(row.permissions), permission)) {
      return { ...base, code: "INSUFFICIENT_PERMISSIONS" };
    }
    // A key without uses left is refused before it eats into its rate limit.
    if (cost > 0 && row.remaining !== null && row.remaining < cost) return { ...base, code: "USAGE_EXCEEDED" };

    let ratelimit: { limit: number; remaining: number; resetMs: number } | undefined;
    if (row.ratelimit_limit !== null && row.ratelimit_duration_sec !== null) {
      const d = await this.limiter.consume(
        { name: "key", points: row.ratelimit_limit, durationSec: row.ratelimit_duration_sec },
        row.id,
      );
      ratelimit = { limit: d.limit, remaining: d.remaining, resetMs: d.resetMs };
      if (!d.allowed) return { ...base, code: "RATE_LIMITED", ratelimit };
    }

    const nowIso = now.toISOString();
    if (cost > 0 && row.remaining !== null) {
      // The one atomic spend: never below zero, exact under concurrent calls on both dialects.
      const spent = await this.db
        .updateTable("api_keys")
        .set((eb) => ({ remaining: eb("remaining", "-", cost), last_used_at: nowIso }))
        .where("id", "=", row.id)
        .where("remaining", ">=", cost)
        .returning("remaining")
        .executeTakeFirst();
      if (!spent) return { ...base, remaining: 0, code: "USAGE_EXCEEDED", ratelimit };
      return { ...base, remaining: spent.remaining, code: "VALID", ratelimit };
    }
    if (row.last_used_at === null || now.getTime() - Date.parse(row.last_used_at) >= LAST_USED_PRECISION_MS) {
      await this.db.updateTable("api_keys").set({ last_used_at: nowIso }).where("id", "=", row.id).execute();
    }
    return { ...base, code: "VALID", ratelimit };
  }

  async create(input: CreateKeyInput): Promise<CreatedKey> {
    return this.insert(input, this.db);
  }

  private async insert(input: CreateKeyInput, db: Kysely<DB>): Promise<CreatedKey> {
    const key = generateKey();
    const { start, last4 } = displayParts(key);
    const row: Row = {
      id: newKeyId(),
      key_hash: hashKey(key),
      start,
      last4,
      name: input.name,
      owner_id: input.ownerId ?? null,
      permissions: JSON.stringify(input.permissions),
      expires_at: input.expiresAt ? new Date(input.expiresAt).toISOString() : null,
      remaining: input.remaining ?? null,
      ratelimit_limit: input.ratelimit?.limit ?? null,
      ratelimit_duration_sec: input.ratelimit?.durationSec ?? null,
      revoked_at: null,
      last_used_at: null,
      created_at: this.now().toISOString(),
    };
    await db.insertInto("api_keys").values(row).execute();
    return { ...this.info(row), key };
  }

  async list(ownerId?: string | null): Promise<KeyInfo[]> {
    let q = this.db.selectFrom("api_keys").selectAll().orderBy("created_at", "desc").orderBy("id");
    if (ownerId !== undefined)
      q = ownerId === null ? q.where("owner_id", "is", null) : q.where("owner_id", "=", ownerId);
    return (await q.execute()).map((r) => this.info(r));
  }

  async revoke(id: string, ownerId?: string | null): Promise<boolean> {
    let q = this.db.updateTable("api_keys").set({ revoked_at: this.now().toISOString() }).where("id", "=", id);
    if (ownerId !== undefined) q = q.where("owner_id", ownerId === null ? "is" : "=", ownerId);
    const res = await q.where("revoked_at", "is", null).executeTakeFirst();
    if (Number(res.numUpdatedRows) > 0) return true;
    // Already revoked counts as revoked; someone else's key is as if it did not exist.
    return (await this.find(id, ownerId)) !== undefined;
  }

  async roll(id: string, ownerId?: string | null, opts: RollOptions = {}): Promise<CreatedKey | null> {
    const graceSec = opts.graceSec ?? 0;
    const now = this.now();
    const graceEnd = new Date(now.getTime() + graceSec * 1000).toISOString();
    return this.db.transaction().execute(async (trx) => {
      // With a grace period the old key expires later (never later than it already would).
      let q = trx
        .updateTable("api_keys")
        .set(
          graceSec > 0
            ? {
                expires_at: sql<string>`case when expires_at is not null and expires_at < ${graceEnd} then expires_at else ${graceEnd} end`,
              }
            : { revoked_at: now.toISOString() },
        )
        .where("id", "=", id)
        .where("revoked_at", "is", null)
        .where((eb) => eb.or([eb("expires_at", "is", null), eb("expires_at", ">", now.toISOString())]));
      if (ownerId !== undefined) q = q.where("owner_id", ownerId === null ? "is" : "=", ownerId);
      // Conditional on "not yet revoked": a double submit rolls once, never issues two keys.
      const res = await q.returningAll().executeTakeFirst();
      if (!res) return null;
      return this.insert(
        {
          name: res.name,
          ownerId: res.owner_id,
          permissions: parsePermissions(res.permissions),
          expiresAt: res.expires_at,
          remaining: res.remaining,
          ratelimit:
            res.ratelimit_limit !== null && res.ratelimit_duration_sec !== null
              ? { limit: res.ratelimit_limit, durationSec: res.ratelimit_duration_sec }
              : null,
        },
        trx,
      );
    });
  }

  async updateLimits(id: string, limits: KeyLimits): Promise<boolean> {
    const res = await this.db
      .updateTable("api_keys")
      .set({
        remaining: limits.remaining,
        ratelimit_limit: limits.ratelimit?.limit ?? null,
        ratelimit_duration_sec: limits.ratelimit?.durationSec ?? null,
      })
      .where("id", "=", id)
      .executeTakeFirst();
    return Number(res.numUpdatedRows) > 0;
  }

  async credit(id: string, uses: number): Promise<boolean> {
    const res = await this.db
      .updateTable("api_keys")
      .set((eb) => ({ remaining: eb("remaining", "+", uses) }))
      .where("id", "=", id)
      .where("remaining", "is not", null)
      .executeTakeFirst();
    return Number(res.numUpdatedRows) > 0 || (await this.find(id)) !== undefined;
  }

  private async find(id: string, ownerId?: string | null): Promise<Row | undefined> {
    let q = this.db.selectFrom("api_keys").selectAll().where("id", "=", id);
    if (ownerId !== undefined) q = q.where("owner_id", ownerId === null ? "is" : "=", ownerId);
    return q.executeTakeFirst();
  }

  private info(r: Row): KeyInfo {
    return {
      id: r.id,
      name: r.name,
      ownerId: r.owner_id,
      prefix: r.start,
      last4: r.last4,
      permissions: parsePermissions(r.permissions),
      createdAt: r.created_at,
      expiresAt: r.expires_at,
      lastUsedAt: r.last_used_at,
      remaining: r.remaining === null ? null : Number(r.remaining),
      ratelimit:
        r.ratelimit_limit !== null && r.ratelimit_duration_sec !== null
          ? { limit: Number(r.ratelimit_limit), durationSec: Number(r.ratelimit_duration_sec) }
          : null,
      status: keyStatus({
        revoked: r.revoked_at !== null,
        expiresAt: r.expires_at,
        remaining: r.remaining,
        now: this.now(),
      }),
    };
  }
}

function parsePermissions(json: string): string[] {
  const parsed: unknown = JSON.parse(json);
  return Array.isArray(parsed) ? parsed.filter((p): p is string => typeof p === "string") : [];
}
