import type { CompiledQuery, InferResult, Kysely, Selectable } from "kysely";
import { PostgresAdapter, sql } from "kysely";
import { LRUCache } from "lru-cache";
import { isConnectionFailure } from "../../db/connection-failure.js";
import { markChargedIn } from "../../db/idempotency.js";
import type { DB } from "../../db/schema.js";
import type { HeldClaim } from "../../ports/idempotency.js";
import type {
  AccountRow,
  CreatedKey,
  CreateKeyInput,
  KeyInfo,
  KeyRateLimitState,
  KeyStore,
  KeyUpdate,
  KeyVerification,
  Refund,
  RollOptions,
  VerifyOptions,
} from "../../ports/key-store.js";
import type { RateLimiter } from "../../ports/rate-limiter.js";
import { displayParts, generateKey, hashKey, hasPermission, KEY_PREFIX, keyStatus, newKeyId } from "./material.js";
import { grantsOf, lookupAndSpend, type SpendColumns } from "./spend-in-lookup.js";

type Row = Selectable<DB["api_keys"]>;
/** A key with the uses and rate limit it spends: its own, or those of the key it shares them with. */
type KeyRow = Row & { q_remaining: number | null; q_limit: number | null; q_duration: number | null };

/**
 * The pools of uses that account-page keys spend (`account_quotas`), as the embedded store spends
 * them with the key's own (features/keys/account-quota.ts `AccountQuotas` is one).
 */
export interface PoolUses {
  /**
   * Spends `cost` uses of `row`'s pool with one conditional statement, in `db` (a transaction) when
   * given (a pool not opened yet is opened with its plan's uses first; a period that is over
   * refills, then the spend runs again): the uses left; undefined when too few are left; null for
   * an unlimited pool (nothing spent).
   */
  take(row: AccountRow, cost: number, db?: Kysely<DB>): Promise<number | null | undefined>;
  /** Gives back uses the store spent for a call refused after all; in `db` (a transaction) when given. */
  credit(pool: string, uses: number, chargedAt?: string, db?: Kysely<DB>): Promise<void>;
}

/**
 * Which of verify's statements suits a key on PostgreSQL, as its last lookup found it: it has a
 * count of uses to spend (its own or its account's) and no rate limit of its own (`spends`), no
 * count and no rate limit (`free`), or a rate limit of its own (`limited`: its limiter decides
 * before its uses are spent, so the statement would only look it up).
 */
type Suits = "spends" | "free" | "limited";

/** `last_used_at` of unlimited keys is refreshed at most this often (it would be a write per call). */
const LAST_USED_PRECISION_MS = 60_000;

/** Keys joined with the key that holds their uses and rate limit (`quota_of`), if not their own. */
function keysOf(db: Kysely<DB>) {
  return db
    .selectFrom("api_keys as k")
    .leftJoin("api_keys as q", "q.id", "k.quota_of")
    .selectAll("k")
    .select(["q.remaining as q_remaining", "q.ratelimit_limit as q_limit", "q.ratelimit_duration_sec as q_duration"]);
}

/**
 * verify's one query: the key, the key holding its uses, and its account's ledger row and uses
 * (hash bound at each call). Prepared once per connection on PostgreSQL, so its columns are named.
 */
function byHashQuery(db: Kysely<DB>) {
  return db
    .selectFrom("api_keys as k")
    .leftJoin("api_keys as q", "q.id", "k.quota_of")
    .leftJoin("key_ledger as l", "l.key_id", "k.id")
    .leftJoin("account_quotas as aq", "aq.owner_id", "l.pool")
    .select([
      "k.id",
      "k.owner_id",
      "k.permissions",
      "k.expires_at",
      "k.revoked_at",
      "k.last_used_at",
      "k.remaining",
      "k.ratelimit_limit",
      "k.ratelimit_duration_sec",
      "k.quota_of",
      "q.remaining as q_remaining",
      "q.ratelimit_limit as q_limit",
      "q.ratelimit_duration_sec as q_duration",
      "l.owner_id as l_owner",
      "l.pool as l_pool",
      "l.plan as l_plan",
      "aq.owner_id as aq_owner",
      "aq.remaining as aq_remaining",
    ])
    .where("k.key_hash", "=", "");
}
type VerifyRow = InferResult<ReturnType<typeof byHashQuery>>[number];
/** A lookup's row; with the spend's columns when the statement also spent (PostgreSQL). */
type SpendingRow = VerifyRow & Partial<SpendColumns>;

/** What the lookup's statement spent (nothing when it only looked up). */
function spentIn(row: SpendingRow) {
  const tried = row.tried === true;
  return {
    tried,
    /** The statement spent the whole charge and recorded it on the call's claim. */
    claimed: tried && row.claim_charged === true,
    key: tried && row.key_spent === true,
    keyLeft: row.key_left == null ? null : Number(row.key_left),
    account: tried && row.account_spent === true,
    accountLeft: row.account_left == null ? null : Number(row.account_left),
  };
}
type Spent = ReturnType<typeof spentIn>;

/**
 * Keys in the project's database (SQLite or PostgreSQL), stored only as SHA-256 and looked up
 * by hash. Gives Unkey's verdicts. Remaining uses are spent by one conditional UPDATE, so they
 * are exact under concurrency and across instances; per-key rate limits go through the shared
 * limiter (rule `key`, Redis when configured). A rolled key and its replacement share one count
 * and one rate limit: the replacement's `quota_of` names the key that holds them.
 *
 * A charged call of an account-page key also spends its pool's uses here, after the key's own
 * (`pools`; the verdict says so in `account.spent`), on both dialects: on PostgreSQL in the
 * lookup's statement when it can (spend-in-lookup.ts), else, and on SQLite, by the pool's own
 * conditional UPDATE. The account layer (features/keys/pooled.ts) then only asks the pool's rate limit.
 *
 * A call charged for an Idempotency-Key claim (`VerifyOptions.claim`) records the charge on the
 * claim with the spends, atomically: in the lookup's statement, or in one transaction with them.
 */
export class EmbeddedKeyStore implements KeyStore {
  /** byHashQuery compiled once: only the hash changes between calls (building and compiling it cost ~22 µs a call). */
  private readonly byHash: CompiledQuery<VerifyRow>;
  /** PostgreSQL: the lookup with a charged call's spends (spend-in-lookup.ts); undefined on SQLite. */
  private readonly spending: CompiledQuery<SpendingRow> | undefined;
  /**
   * Which statement suits a key (by hash). Only a choice of statement, never a verdict: either
   * statement gives the same answer for any key.
   */
  private readonly suits = new LRUCache<string, Suits>({ max: 10_000 });

  constructor(
    private readonly db: Kysely<DB>,
    private readonly limiter: RateLimiter,
    private readonly pools: PoolUses,
    private readonly now: () => Date = () => new Date(),
  ) {
    this.byHash = byHashQuery(db).compile();
    const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
    this.spending = postgres ? lookupAndSpend(this.byHash) : undefined;
  }

  async verify(key: string, permission?: string, opts: VerifyOptions = {}): Promise<KeyVerification> {
    try {
      const cost = opts.cost ?? 1;
      return await this.check(key, permission, cost, cost > 0 ? opts.claim : undefined);
    } catch (err) {
      // Only "the database cannot answer now" is an outage; anything else is a bug, thrown so
      // that it is logged and answered as 500 instead of hiding behind a 503.
      if (!isConnectionFailure(err)) throw err;
      return { kind: "unavailable", store: "embedded", detail: `embedded key store: ${(err as Error).message}` };
    }
  }

  private async check(
    key: string,
    permission: string | undefined,
    cost: number,
    claim: HeldClaim | undefined,
  ): Promise<KeyVerification> {
    if (!key.startsWith(`${KEY_PREFIX}_`) || key.length > 128) return { kind: "verdict", code: "NOT_FOUND" };
    const now = this.now();
    const nowIso = now.toISOString();
    const hash = hashKey(key);
    // PostgreSQL: a charged call of a key with a count of uses, or one charged for a claim, is
    // looked up and spent (and recorded on the claim) in one statement, one round trip; another
    // is only looked up (a cheaper statement).
    const suits = this.suits.get(hash);
    const spending =
      this.spending !== undefined && cost > 0 && (suits === "spends" || (claim !== undefined && suits !== "limited"));
    const [row] = (
      spending
        ? await this.db.executeQuery<SpendingRow>({
            ...this.spending,
            parameters: [hash, cost, nowIso, grantsOf(permission), claim?.scope, claim?.key, claim?.owner],
          })
        : await this.db.executeQuery<SpendingRow>({ ...this.byHash, parameters: [hash] })
    ).rows;
    if (!row) return { kind: "verdict", code: "NOT_FOUND" };
    const limits = limitsOf(row);
    if (this.spending) {
      const counts = limits.remaining !== null || row.aq_remaining !== null;
      this.suits.set(hash, limits.ratelimit !== null ? "limited" : counts ? "spends" : "free");
    }
    const spent = spentIn(row);
    const account: AccountRow | null =
      row.l_owner === null || row.l_plan === null || row.l_pool === null
        ? null
        : {
            ownerId: row.l_owner,
            pool: row.l_pool,
            plan: row.l_plan,
            opened: row.aq_owner !== null,
            remaining: row.aq_remaining === null ? null : Number(row.aq_remaining),
          };
    const base = {
      kind: "verdict" as const,
      keyId: row.id,
      ownerId: row.owner_id,
      remaining: limits.remaining,
      account,
    };
    // A refusal gives back what the statement spent (it spends only for calls that pass these checks).
    const refuse = async <T extends KeyVerification>(answer: T): Promise<T> => {
      if (spent.key) await this.giveBack(limits.holder, cost);
      if (spent.account && account) await this.pools.credit(account.pool, cost);
      return answer;
    };
    if (row.revoked_at !== null) return refuse({ ...base, code: "DISABLED" });
    if (row.expires_at !== null && Date.parse(row.expires_at) <= now.getTime()) {
      return refuse({ ...base, code: "EXPIRED" });
    }
    if (permission !== undefined && !hasPermission(parsePermissions(row.permissions), permission)) {
      return refuse({ ...base, code: "INSUFFICIENT_PERMISSIONS" });
    }
    if (cost > 0 && limits.remaining !== null) {
      // The statement's conditional spend decided; else a key without uses left is refused
      // before it eats into its rate limit.
      if (spent.tried ? !spent.key : limits.remaining < cost) return { ...base, remaining: 0, code: "USAGE_EXCEEDED" };
    }

    let ratelimit: KeyRateLimitState | undefined;
    if (limits.ratelimit) {
      const rule = { name: "key", points: limits.ratelimit.limit, durationSec: limits.ratelimit.durationSec };
      const d = await this.limiter.consume(rule, limits.holder);
      ratelimit = {
        limit: d.limit,
        remaining: d.remaining,
        resetMs: d.resetMs,
        name: "key",
        durationSec: rule.durationSec,
      };
      if (!d.allowed) return { ...base, code: "RATE_LIMITED", ratelimit };
    }

    // What the statement did not spend is spent here; with the claim's record, in one transaction.
    const charge = async (db: Kysely<DB>): Promise<KeyVerification> => {
      let remaining = limits.remaining;
      const own = limits.holder === row.id;
      if (spent.key) remaining = spent.keyLeft;
      else if (cost > 0 && limits.remaining !== null) {
        // The one atomic spend: never below zero, exact under concurrent calls on both dialects.
        const done = await db
          .updateTable("api_keys")
          .set((eb) => ({ remaining: eb("remaining", "-", cost), ...(own && { last_used_at: nowIso }) }))
          .where("id", "=", limits.holder)
          .where("remaining", ">=", cost)
          .returning("remaining")
          .executeTakeFirst();
        if (!done) return { ...base, remaining: 0, code: "USAGE_EXCEEDED", ratelimit };
        if (!own) await this.touch(row, nowIso, db);
        remaining = done.remaining;
      } else if (row.last_used_at === null || now.getTime() - Date.parse(row.last_used_at) >= LAST_USED_PRECISION_MS) {
        await this.touch(row, nowIso, db);
      }
      const pool = account === null ? null : await this.spendPool(account, spent, cost, db);
      const charged = claim !== undefined && pool?.spent !== false;
      const recorded =
        charged &&
        (spent.claimed ||
          Number((await markChargedIn(db, claim, claim.owner, true).executeTakeFirst()).numUpdatedRows) > 0);
      return {
        ...base,
        remaining,
        account: pool,
        code: "VALID",
        ratelimit,
        ...(charged && { claimCharged: recorded }),
      };
    };
    return claim !== undefined && !spent.claimed ? this.db.transaction().execute(charge) : charge(this.db);
  }

  /**
   * The pool's uses of a call the key passed: spent by the lookup's statement, or here by the
   * pool's own conditional UPDATE (SQLite; a key only looked up; a pool not opened yet; a refusal
   * by the statement, which spends nothing from a period that is over: it refills, then spends).
   */
  private async spendPool(account: AccountRow, spent: Spent, cost: number, db: Kysely<DB>): Promise<AccountRow> {
    if (cost === 0) return account;
    if (spent.account) return { ...account, remaining: spent.accountLeft, spent: true };
    if (account.opened && account.remaining === null) return account;
    const left = await this.pools.take(account, cost, db === this.db ? undefined : db);
    if (left === null) return { ...account, opened: true, remaining: null };
    if (left === undefined) return { ...account, opened: true, remaining: 0, spent: false };
    return { ...account, opened: true, remaining: left, spent: true };
  }

  /**
   * Gives back uses to the key that holds them (a no-op for a key without a count, or for a call
   * charged at `chargedAt` before its uses were last set: they are the new count).
   */
  private async giveBack(holder: string, uses: number, chargedAt?: string, db: Kysely<DB> = this.db): Promise<void> {
    let q = db
      .updateTable("api_keys")
      .set((eb) => ({ remaining: eb("remaining", "+", uses) }))
      .where("id", "=", holder)
      .where("remaining", "is not", null);
    if (chargedAt !== undefined)
      q = q.where((eb) => eb.or([eb("uses_set_at", "is", null), eb("uses_set_at", "<=", chargedAt)]));
    await q.execute();
  }

  private async touch(row: { id: string }, nowIso: string, db: Kysely<DB> = this.db): Promise<void> {
    await db.updateTable("api_keys").set({ last_used_at: nowIso }).where("id", "=", row.id).execute();
  }

  async create(input: CreateKeyInput): Promise<CreatedKey> {
    return this.insert(input, this.db);
  }

  private async insert(
    input: CreateKeyInput,
    db: Kysely<DB>,
    roll: { replaces: string; quotaOf: string } | null = null,
  ): Promise<CreatedKey> {
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
      replaces: roll?.replaces ?? null,
      quota_of: roll?.quotaOf ?? null,
      rolled_at: null,
      uses_set_at: null,
    };
    await db.insertInto("api_keys").values(row).execute();
    const stored = await keysOf(db).where("k.id", "=", row.id).executeTakeFirstOrThrow();
    return { ...this.info(stored), key };
  }

  async list(ownerId?: string | null): Promise<KeyInfo[]> {
    let q = keysOf(this.db).orderBy("k.created_at", "desc").orderBy("k.id");
    if (ownerId !== undefined) q = q.where("k.owner_id", ownerId === null ? "is" : "=", ownerId);
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
    const nowIso = now.toISOString();
    const graceEnd = new Date(now.getTime() + graceSec * 1000).toISOString();
    return this.db.transaction().execute(async (trx) => {
      const old = await this.find(id, ownerId, trx);
      if (!old) return null;
      // With a grace period the old key expires later (never later than it already would).
      const res = await trx
        .updateTable("api_keys")
        .set(
          graceSec > 0
            ? {
                rolled_at: nowIso,
                expires_at: sql<string>`case when expires_at is not null and expires_at < ${graceEnd} then expires_at else ${graceEnd} end`,
              }
            : { rolled_at: nowIso, revoked_at: nowIso },
        )
        .where("id", "=", id)
        // Conditional on "not yet rolled or revoked": a double submit rolls once, never issues two keys.
        .where("rolled_at", "is", null)
        .where("revoked_at", "is", null)
        .where((eb) => eb.or([eb("expires_at", "is", null), eb("expires_at", ">", nowIso)]))
        .executeTakeFirst();
      if (Number(res.numUpdatedRows) === 0) return null;
      // The replacement keeps the old key's own expiry (read before the grace end replaced it) and
      // spends the same uses under the same rate limit: a roll is not a second quota.
      return this.insert(
        {
          name: old.name,
          ownerId: old.owner_id,
          permissions: parsePermissions(old.permissions),
          expiresAt: old.expires_at,
          remaining: null,
          ratelimit: null,
        },
        trx,
        { replaces: old.id, quotaOf: old.quota_of ?? old.id },
      );
    });
  }

  async update(id: string, patch: KeyUpdate, ownerId?: string | null): Promise<KeyInfo | null> {
    return this.db.transaction().execute(async (trx) => {
      const row = await this.find(id, ownerId, trx);
      if (!row) return null;
      const own = {
        ...(patch.name !== undefined && { name: patch.name }),
        ...(patch.expiresAt !== undefined && {
          expires_at: patch.expiresAt === null ? null : new Date(patch.expiresAt).toISOString(),
        }),
        ...(patch.permissions !== undefined && { permissions: JSON.stringify(patch.permissions) }),
      };
      if (Object.keys(own).length > 0) await trx.updateTable("api_keys").set(own).where("id", "=", id).execute();
      const shared = {
        ...(patch.remaining !== undefined && { remaining: patch.remaining, uses_set_at: this.now().toISOString() }),
        ...(patch.ratelimit !== undefined && {
          ratelimit_limit: patch.ratelimit?.limit ?? null,
          ratelimit_duration_sec: patch.ratelimit?.durationSec ?? null,
        }),
      };
      if (Object.keys(shared).length > 0) {
        await trx
          .updateTable("api_keys")
          .set(shared)
          .where("id", "=", row.quota_of ?? row.id)
          .execute();
      }
      const after = await keysOf(trx).where("k.id", "=", id).executeTakeFirstOrThrow();
      return this.info(after);
    });
  }

  /**
   * Gives back `uses` to the key that holds them (the first key of its rolls); with `refund.pool`,
   * to that pool's too, and with `refund.claim`, clears the charge recorded on the claim: all in
   * one transaction, and only while the claim is still its holder's (else nothing, false: a
   * request that took it over relies on that charge).
   */
  async refund(id: string, uses: number, refund: Refund = {}): Promise<boolean> {
    const giveBack = async (db: Kysely<DB>) => {
      const { claim } = refund;
      if (claim && Number((await markChargedIn(db, claim, claim.owner, false).executeTakeFirst()).numUpdatedRows) === 0)
        return false;
      const row = await this.find(id, undefined, db);
      if (!row) return false;
      await this.giveBack(row.quota_of ?? row.id, uses, refund.chargedAt, db);
      if (refund.pool !== undefined) await this.pools.credit(refund.pool, uses, refund.chargedAt, db);
      return true;
    };
    return refund.pool !== undefined || refund.claim ? this.db.transaction().execute(giveBack) : giveBack(this.db);
  }

  private async find(id: string, ownerId?: string | null, db: Kysely<DB> = this.db): Promise<KeyRow | undefined> {
    let q = keysOf(db).where("k.id", "=", id);
    if (ownerId !== undefined) q = q.where("k.owner_id", ownerId === null ? "is" : "=", ownerId);
    return q.executeTakeFirst();
  }

  private info(r: KeyRow): KeyInfo {
    const { remaining, ratelimit } = limitsOf(r);
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
      remaining,
      ratelimit,
      status: keyStatus({ revoked: r.revoked_at !== null, expiresAt: r.expires_at, remaining, now: this.now() }),
      replaces: r.replaces,
    };
  }
}

type LimitColumns = Pick<KeyRow, "id" | "quota_of" | "remaining" | "ratelimit_limit" | "ratelimit_duration_sec"> &
  Pick<KeyRow, "q_remaining" | "q_limit" | "q_duration">;

/** The uses and rate limit a key spends, and the key that holds them. */
function limitsOf(r: LimitColumns) {
  const shared = r.quota_of !== null;
  const remaining = shared ? r.q_remaining : r.remaining;
  const limit = shared ? r.q_limit : r.ratelimit_limit;
  const duration = shared ? r.q_duration : r.ratelimit_duration_sec;
  return {
    holder: r.quota_of ?? r.id,
    remaining: remaining === null ? null : Number(remaining),
    ratelimit: limit !== null && duration !== null ? { limit: Number(limit), durationSec: Number(duration) } : null,
  };
}

function parsePermissions(json: string): string[] {
  const parsed: unknown = JSON.parse(json);
  return Array.isArray(parsed) ? parsed.filter((p): p is string => typeof p === "string") : [];
}
