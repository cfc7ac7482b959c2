import type { Kysely } from "kysely";
import type { DB } from "../../db/schema.js";
import { ApiError } from "../../http/errors.js";
import type { CreatedKey, KeyInfo, KeyLimits, KeyStore } from "../../ports/key-store.js";
import { KeyLedger, type LedgerRow } from "./ledger.js";
import { PlanStore } from "./plan-store.js";
import { PLANS, type Plan, type PlanName, planOf } from "./plans.js";
import type { UsageCounter, UsageCounts } from "./usage.js";

export const limitsOf = (plan: Plan): KeyLimits => ({ remaining: plan.quota, ratelimit: plan.ratelimit });

export interface KeyOverview extends KeyInfo {
  plan: string | null;
  revokedAt: string | null;
  rolledAt: string | null;
  usage: UsageCounts;
}

export interface CreateForAccount {
  ownerId: string;
  email: string;
  name: string;
  permissions: string[];
  expiresAt: string | null;
}

/**
 * Self-service keys under plans, for the account page and the operator CLI: the caps and unique
 * names (atomically, through the ledger), limits from the plan, rolls with a grace period, and
 * per-key usage. Works the same over the embedded store and Unkey.
 */
export class AccountKeys {
  readonly plans: PlanStore;
  readonly ledger: KeyLedger;

  constructor(
    private readonly keys: KeyStore,
    db: Kysely<DB>,
    private readonly usage: UsageCounter,
    now: () => Date = () => new Date(),
  ) {
    this.plans = new PlanStore(db, now);
    this.ledger = new KeyLedger(db, now);
  }

  async planOfAccount(email: string): Promise<Plan> {
    return PLANS[await this.plans.planFor(email)];
  }

  async create(input: CreateForAccount): Promise<CreatedKey> {
    const plan = await this.planOfAccount(input.email);
    // Keys the operator revoked meanwhile stop counting before the caps are checked.
    await this.ledger.reconcile(input.ownerId, await this.keys.list(input.ownerId));
    const r = await this.ledger.reserve(input.ownerId, input.name, plan, input.expiresAt);
    if (!r.ok) throw capError(r, plan);
    try {
      const created = await this.keys.create({
        name: input.name,
        ownerId: input.ownerId,
        permissions: input.permissions,
        expiresAt: input.expiresAt,
        ...limitsOf(plan),
      });
      await this.ledger.confirm(r.id, created.id);
      return created;
    } catch (err) {
      await this.ledger.cancel(r.id).catch(() => undefined);
      throw err;
    }
  }

  /** Null when the key is not this owner's, or already revoked or rolled (a double submit). */
  async roll(ownerId: string, keyId: string, graceSec: number): Promise<CreatedKey | null> {
    const before = await this.ledger.byKeyId(keyId);
    if (before && before.owner_id !== ownerId) return null;
    if (before && !(await this.ledger.beginRoll(ownerId, keyId, graceSec))) return null;
    try {
      const created = await this.keys.roll(keyId, ownerId, { graceSec });
      if (!created) {
        if (before) await this.ledger.undoRoll(ownerId, keyId, before);
        return null;
      }
      if (before) await this.ledger.addReplacement(before, created.id);
      return created;
    } catch (err) {
      if (before) await this.ledger.undoRoll(ownerId, keyId, before).catch(() => undefined);
      throw err;
    }
  }

  async revoke(ownerId: string, keyId: string): Promise<boolean> {
    const done = await this.keys.revoke(keyId, ownerId);
    if (done) await this.ledger.markRevoked(ownerId, keyId);
    return done;
  }

  async overview(ownerId: string): Promise<KeyOverview[]> {
    const [keys, rows] = await Promise.all([this.keys.list(ownerId), this.ledger.forOwner(ownerId)]);
    const byKey = new Map<string, LedgerRow>(rows.filter((r) => r.key_id !== null).map((r) => [r.key_id as string, r]));
    const counts = await this.usage.counts(keys.map((k) => k.id));
    return keys.map((k) => {
      const row = byKey.get(k.id);
      const usage = counts.get(k.id) ?? { last24h: 0, last30d: 0, lastHour: null };
      return {
        ...k,
        plan: row?.plan ?? null,
        revokedAt: row?.revoked_at ?? null,
        rolledAt: row?.rolled_at ?? null,
        lastUsedAt: k.lastUsedAt ?? (usage.lastHour ? `${usage.lastHour}:00:00.000Z` : null),
        usage,
      };
    });
  }

  /**
   * Puts an account on `plan` (operator or purchase). Its active keys get the plan's limits at
   * once (uses reset to the plan's quota); new keys get them at creation.
   */
  async grant(email: string, plan: PlanName, source: string, reference: string | null = null) {
    const grant = await this.plans.grant(email, plan, source, reference);
    const ownerId = await this.plans.userIdFor(email);
    let updatedKeys = 0;
    if (ownerId) {
      for (const id of await this.ledger.activeKeyIds(ownerId)) {
        if (await this.keys.updateLimits(id, limitsOf(planOf(plan)))) updatedKeys++;
      }
      await this.ledger.setPlan(ownerId, plan);
    }
    return { ...grant, updatedKeys };
  }
}

function capError(r: Exclude<Awaited<ReturnType<KeyLedger["reserve"]>>, { ok: true }>, plan: Plan): ApiError {
  switch (r.why) {
    case "DUPLICATE_NAME":
      return new ApiError("conflict", "You already have an active key with this name: choose another name.", {
        reason: "DUPLICATE_NAME",
      });
    case "KEY_LIMIT":
      return new ApiError(
        "conflict",
        `The ${plan.name} plan allows ${r.limit} active keys: revoke one first, or upgrade your plan.`,
        { reason: "KEY_LIMIT" },
      );
    case "DAILY_LIMIT":
      return new ApiError(
        "rate_limited",
        `The ${plan.name} plan allows ${r.limit} new keys a day: try again later, or upgrade your plan.`,
        { reason: "KEY_CREATION_LIMIT", headers: { "Retry-After": String(r.retryAfterSec) } },
      );
  }
}
