import type { Kysely } from "kysely";
import type { DB } from "../../db/schema.js";
import { fail, ok, type Result } from "../../lib/result.js";
import type { CreatedKey, KeyInfo, KeyStore, KeyUpdate } from "../../ports/key-store.js";
import { AccountQuotas, fewer, quotaPool } from "./account-quota.js";
import type { AuditEntry, AuditEvent } from "./activity-log.js";
import { KeyLedger, type LedgerRow, type Reservation } from "./ledger.js";
import { PlanStore } from "./plan-store.js";
import { isPlanName, PLAN_NAMES, PLANS, type Plan, type PlanName, planOf } from "./plans.js";
import type { KeyRefusal } from "./refusals.js";
import type { UsageCounter, UsageCounts } from "./usage.js";

export interface KeyOverview extends KeyInfo {
  plan: string | null;
  revokedAt: string | null;
  /** `plan`: revoked because a downgrade left the account over its plan's active-key cap. */
  revokedReason: string | null;
  rolledAt: string | null;
  /** The key that replaced this one in a roll (old → new). */
  replacedBy: string | null;
  usage: UsageCounts;
}

export interface CreateForAccount {
  ownerId: string;
  email: string;
  name: string;
  permissions: string[];
  expiresAt: string | null;
}

/** A plan as the account page shows it: with the uses its keys have left together. */
export type AccountPlan = Plan & { usesLeft?: number | null };

/** Who acts: an account (only its own keys), or the operator (`undefined`: any key). */
export type Actor = string | undefined;

type Refusal<K extends KeyRefusal["kind"]> = Extract<KeyRefusal, { kind: K }>;
export type CreateRefusal = Refusal<"duplicate_name" | "key_limit" | "daily_limit">;
export type RollRefusal = Refusal<"not_found" | "roll_in_progress" | "operator_key">;
export type UpdateRefusal = Refusal<
  "not_found" | "expiry_in_past" | "plan_limit" | "rolled" | "duplicate_name" | "operator_key"
>;

/**
 * Self-service keys under plans, for the account page and the operator CLI: the caps and unique
 * names (atomically, through the ledger), the account's uses and rate limit (account-quota.ts),
 * rolls with a grace period, revoking a roll's pair, edits within the plan, plan changes, and
 * per-key usage. Works the same over the embedded store and Unkey. A refused change is returned
 * as a KeyRefusal (refusals.ts words it), not thrown.
 */
export class AccountKeys {
  readonly plans: PlanStore;
  readonly ledger: KeyLedger;
  readonly quotas: AccountQuotas;

  /** `onEvent`: where each key event of an account goes (the audit log). */
  constructor(
    private readonly keys: KeyStore,
    db: Kysely<DB>,
    private readonly usage: UsageCounter,
    private readonly now: () => Date = () => new Date(),
    private readonly onEvent: (e: AuditEntry) => void = () => {},
  ) {
    this.plans = new PlanStore(db, now);
    this.ledger = new KeyLedger(db, now);
    this.quotas = new AccountQuotas(db, now);
  }

  private audit(ownerId: string | null | undefined, event: AuditEvent, keyId: string | null, detail: string | null) {
    if (ownerId) this.onEvent({ ownerId, at: this.now().toISOString(), event, keyId, detail });
  }

  async planOfAccount(email: string): Promise<Plan> {
    return PLANS[await this.plans.planFor(email)];
  }

  /** The pool the account's keys spend (quotaPool): the account on a paid plan, its mailbox on the free one. */
  async poolOfAccount(ownerId: string, email: string): Promise<string> {
    return quotaPool(ownerId, email, (await this.planOfAccount(email)).name);
  }

  /** The account's plan and the uses its keys have left together (null = unlimited). */
  async accountPlan(ownerId: string, email: string): Promise<AccountPlan> {
    const plan = await this.planOfAccount(email);
    const left = await this.quotas.remaining(quotaPool(ownerId, email, plan.name));
    return { ...plan, usesLeft: left === undefined ? plan.quota : left };
  }

  async create(input: CreateForAccount): Promise<Result<CreatedKey, CreateRefusal>> {
    const plan = await this.planOfAccount(input.email);
    // Keys the operator revoked meanwhile stop counting before the caps are checked.
    await this.ledger.reconcile(input.ownerId, await this.keys.list(input.ownerId));
    const pool = quotaPool(input.ownerId, input.email, plan.name);
    const r = await this.ledger.reserve(input.ownerId, pool, input.name, plan, input.expiresAt);
    if (!r.ok) return fail(capRefusal(r, plan));
    try {
      await this.quotas.open(pool, plan);
      // No limits of its own: it spends the account's uses under the account's rate limit.
      const created = await this.keys.create({
        name: input.name,
        ownerId: input.ownerId,
        permissions: input.permissions,
        expiresAt: input.expiresAt,
        remaining: null,
        ratelimit: null,
      });
      await this.ledger.confirm(r.id, created.id);
      this.audit(input.ownerId, "created", created.id, input.name);
      return ok(created);
    } catch (err) {
      await this.ledger.cancel(r.id).catch(() => undefined);
      throw err;
    }
  }

  /**
   * `not_found` when the key is not this owner's, or already revoked or rolled (a double submit).
   * A roll with a grace period is refused while the key's own predecessor is still in its grace
   * period: one roll in flight per key, so rolling never multiplies live keys.
   */
  async roll(actor: Actor, keyId: string, graceSec: number): Promise<Result<CreatedKey, RollRefusal>> {
    const notFound = fail({ kind: "not_found" as const });
    const before = await this.ledger.byKeyId(keyId);
    if (before && actor !== undefined && before.owner_id !== actor) return notFound;
    const ownerId = before?.owner_id ?? actor;
    if (graceSec > 0) {
      const keys = await this.keys.list(ownerId);
      // An operator-issued key with uses or a rate limit of its own: at Unkey both keys of a roll
      // hold a copy of them during the grace period, which is the operator's to give, not its owner's.
      const key = keys.find((k) => k.id === keyId);
      if (!before && actor !== undefined && key && (key.remaining !== null || key.ratelimit !== null))
        return fail({ kind: "operator_key", action: "roll" });
      const previous = stillInGrace(keys, keyId);
      if (previous) return fail({ kind: "roll_in_progress", previous: `${previous.prefix}…${previous.last4}` });
    }
    if (before && !(await this.ledger.beginRoll(before.owner_id, keyId, graceSec))) return notFound;
    try {
      const created = await this.keys.roll(keyId, ownerId, { graceSec });
      if (!created) {
        if (before) await this.ledger.undoRoll(before.owner_id, keyId, before);
        return notFound;
      }
      if (before) await this.ledger.addReplacement(before, created.id);
      this.audit(
        ownerId,
        "rolled",
        keyId,
        graceSec > 0 ? `replaced; old key works ${graceSec} s more` : "replaced at once",
      );
      return ok(created);
    } catch (err) {
      if (before) await this.ledger.undoRoll(before.owner_id, keyId, before).catch(() => undefined);
      throw err;
    }
  }

  /**
   * Revokes a key and, unless `only`, the other key of its roll (old → new) while that one still
   * works. The ids revoked, or null when there is no such key (for this actor).
   */
  async revoke(
    actor: Actor,
    keyId: string,
    opts: { only?: boolean; reason?: string | null } = {},
  ): Promise<string[] | null> {
    const ownerId = actor ?? (await this.ledger.byKeyId(keyId))?.owner_id;
    const keys = await this.keys.list(ownerId);
    const key = keys.find((k) => k.id === keyId);
    if (!key) return actor === undefined && (await this.keys.revoke(keyId)) ? [keyId] : null;
    const pair = opts.only
      ? []
      : keys.filter((k) => k.status === "active" && (k.id === key.replaces || k.replaces === keyId)).map((k) => k.id);
    const ids = [keyId, ...pair];
    for (const id of ids) {
      if (await this.keys.revoke(id, ownerId)) {
        await this.ledger.markRevoked(id, opts.reason ?? null);
        this.audit(ownerId, "revoked", id, opts.reason === "plan" ? "over the new plan's key cap" : null);
      }
    }
    // The replacement alone revoked: the old key, still in grace, is the account's key again and
    // counts toward the active-key cap (else revoke-only-the-new would mint uncounted keys).
    const kept = keys.find((k) => k.id === key.replaces && k.status === "active" && !ids.includes(k.id));
    if (kept) await this.ledger.countAgain(kept.id);
    return ids;
  }

  /**
   * Changes a key. An account-page key stays within its plan: its own uses at most the plan's
   * quota, its own rate limit at most the plan's rate, a name unique among the account's keys.
   * `not_found` when there is no such key (for this actor).
   */
  async update(actor: Actor, keyId: string, patch: KeyUpdate): Promise<Result<KeyInfo, UpdateRefusal>> {
    const row = await this.ledger.byKeyId(keyId);
    if (row && actor !== undefined && row.owner_id !== actor) return fail({ kind: "not_found" });
    if (patch.expiresAt && Date.parse(patch.expiresAt) <= this.now().getTime()) {
      return fail({ kind: "expiry_in_past" });
    }
    if (row) {
      const plan = planOf(row.plan);
      const beyond = beyondPlan(patch, plan);
      if (beyond) return fail(beyond);
      // A key in its grace period ends with it: a later expiry would keep a second key alive.
      if (row.rolled_at !== null && patch.expiresAt !== undefined) return fail({ kind: "rolled" });
      if (patch.name !== undefined) {
        const wanted = patch.name.toLowerCase();
        const others = await this.keys.list(row.owner_id);
        if (others.some((k) => k.id !== keyId && k.status === "active" && k.name.toLowerCase() === wanted))
          return fail({ kind: "duplicate_name" });
      }
    } else if (actor !== undefined && Object.keys(patch).some((field) => field !== "name")) {
      // A key the operator issued to this account (not made on its page): its owner may not lift what it was given.
      return fail({ kind: "operator_key", action: "edit" });
    } else if (patch.expiresAt !== undefined && (await this.keys.list(undefined)).some((k) => k.replaces === keyId)) {
      // An operator key that was rolled ends with its grace period too (no ledger row says so: its replacement does).
      return fail({ kind: "rolled" });
    }
    const updated = await this.keys.update(keyId, patch, row?.owner_id ?? actor);
    if (!updated) return fail({ kind: "not_found" });
    if (row) await this.ledger.edited(keyId, patch);
    this.audit(row?.owner_id ?? actor, "edited", keyId, Object.keys(patch).join(", "));
    return ok(updated);
  }

  async overview(ownerId: string): Promise<KeyOverview[]> {
    const [keys, rows] = await Promise.all([this.keys.list(ownerId), this.ledger.forOwner(ownerId)]);
    const pools = [...new Set(rows.map((r) => r.pool))];
    const lefts = new Map(await Promise.all(pools.map(async (p) => [p, await this.quotas.remaining(p)] as const)));
    const byKey = new Map<string, LedgerRow>(rows.filter((r) => r.key_id !== null).map((r) => [r.key_id as string, r]));
    const counts = await this.usage.counts(keys.map((k) => k.id));
    return keys.map((k) => {
      const row = byKey.get(k.id);
      const usage = counts.get(k.id) ?? { last24h: 0, last30d: 0, lastHour: null };
      const left = row ? lefts.get(row.pool) : undefined;
      const pool = row ? (left === undefined ? planOf(row.plan).quota : left) : null;
      return {
        ...k,
        remaining: row ? fewer(k.remaining, pool) : k.remaining,
        plan: row?.plan ?? null,
        revokedAt: row?.revoked_at ?? null,
        revokedReason: row?.revoked_reason ?? null,
        rolledAt: row?.rolled_at ?? null,
        replacedBy: keys.find((x) => x.replaces === k.id)?.id ?? null,
        lastUsedAt: k.lastUsedAt ?? (usage.lastHour ? `${usage.lastHour}:00:00.000Z` : null),
        usage,
      };
    });
  }

  /**
   * Puts an account on `plan` (operator or purchase). Its uses and rate limit follow at once: an
   * upgrade (or the same plan again) gives the plan's quota; a downgrade keeps what is left, at
   * most the lower quota, and revokes the newest keys over the lower plan's active-key cap (each
   * with its roll's pair).
   */
  async grant(email: string, plan: PlanName, source: string, reference: string | null = null) {
    const granted = await this.apply(email, plan, source, reference);
    if (!granted) throw new Error("an operator's grant always applies");
    return granted;
  }

  /**
   * A purchase made at `purchasedAt` (Stripe's event time), applied as `grant` unless a later
   * purchase is in force (Stripe delivers in any order and retries for days): then null, nothing changed.
   */
  purchase(email: string, plan: PlanName, session: string, purchasedAt: string | undefined) {
    return this.apply(email, plan, "stripe", session, purchasedAt);
  }

  private async apply(email: string, plan: PlanName, source: string, reference: string | null, purchasedAt?: string) {
    const previous = await this.plans.planFor(email);
    const grant = await this.plans.grant(email, plan, source, reference, purchasedAt);
    if (!grant) return null;
    const ownerId = await this.plans.userIdFor(email);
    // A downgrade from the plan whose limits the account's keys have (the ledger's), not from the
    // plan recorded last: a concurrent grant may have recorded one and not applied it.
    const applied = ownerId ? (await this.ledger.forOwner(ownerId))[0]?.plan : undefined;
    const from = isPlanName(applied) ? applied : previous;
    const downgrade = PLAN_NAMES.indexOf(plan) < PLAN_NAMES.indexOf(from);
    let usesLeft: number | null = PLANS[plan].quota;
    const revokedKeys: { id: string; name: string }[] = [];
    if (ownerId && previous !== plan) this.audit(ownerId, "plan", null, `${previous} → ${plan} (${source})`);
    if (ownerId) {
      // Each only while `plan` is still the account's: two grants at once (purchases delivered
      // together) could leave the plan of one with the uses or rate limit of the other.
      usesLeft = await this.quotas.applyPlan(quotaPool(ownerId, email, plan), PLANS[plan], downgrade, email);
      await this.ledger.setPlan(ownerId, plan, email);
      if (downgrade) {
        const current = await this.ledger.currentKeyIds(ownerId);
        const names = new Map((await this.keys.list(ownerId)).map((k) => [k.id, k.name]));
        for (const id of current.slice(0, Math.max(0, current.length - PLANS[plan].maxActiveKeys))) {
          await this.revoke(ownerId, id, { reason: "plan" });
          revokedKeys.push({ id, name: names.get(id) ?? "" });
        }
      }
    }
    return {
      ...grant,
      previousPlan: previous,
      usesLeft,
      revokedKeys,
      message: planChangeMessage(previous, plan, revokedKeys.length),
    };
  }
}

/**
 * A key that `keyId` replaced, directly or through earlier rolls, and that still works (in its
 * grace period). Followed through the whole chain: a leak roll (no grace) in between must not
 * open the way to another key in grace.
 */
function stillInGrace(keys: KeyInfo[], keyId: string): KeyInfo | undefined {
  const byId = new Map(keys.map((k) => [k.id, k]));
  const seen = new Set<string>([keyId]);
  let at = byId.get(keyId)?.replaces;
  while (at && !seen.has(at)) {
    seen.add(at);
    const k = byId.get(at);
    if (k?.status === "active") return k;
    at = k?.replaces;
  }
  return undefined;
}

/** What a plan change did, for the CLI and the account page. */
export function planChangeMessage(from: PlanName, to: PlanName, revoked: number): string {
  const p = PLANS[to];
  const uses = p.quota === null ? "unlimited uses" : `at most ${p.quota.toLocaleString("en")} uses`;
  const head = `The account moved from ${from} to ${to}: ${uses}, ${p.ratelimit.limit} calls per ${p.ratelimit.durationSec} s, ${p.maxActiveKeys} active keys.`;
  if (revoked === 0) return head;
  return `${head} ${revoked} key${revoked === 1 ? " was" : "s were"} over the ${to} plan's cap and revoked, newest first.`;
}

/** An edit that would lift a key above its plan (a 409 on the page, the same words in the CLI). */
function beyondPlan(patch: KeyUpdate, plan: Plan): Refusal<"plan_limit"> | null {
  const refuse = (allows: string): Refusal<"plan_limit"> => ({ kind: "plan_limit", plan: plan.name, allows });
  if (patch.remaining != null && plan.quota !== null && patch.remaining > plan.quota) {
    return refuse(`${plan.quota} uses`);
  }
  const rl = patch.ratelimit;
  const max = plan.ratelimit;
  if (rl && rl.limit * max.durationSec > max.limit * rl.durationSec) {
    return refuse(`${max.limit} calls per ${max.durationSec} s`);
  }
  return null;
}

function capRefusal(r: Exclude<Reservation, { ok: true }>, plan: Plan): CreateRefusal {
  switch (r.why) {
    case "DUPLICATE_NAME":
      return { kind: "duplicate_name" };
    case "KEY_LIMIT":
      return { kind: "key_limit", plan: plan.name, limit: r.limit };
    case "DAILY_LIMIT":
      return { kind: "daily_limit", plan: plan.name, limit: r.limit, retryAfterSec: r.retryAfterSec };
  }
}
