import type { HeldClaim } from "../../ports/idempotency.js";
import type { KeyRateLimitState, KeyVerification, KeyVerifier, Refund, VerifyOptions } from "../../ports/key-store.js";
import type { LimitDecision, LimitRule, RateLimiter } from "../../ports/rate-limiter.js";
import { type AccountQuotas, fewer, type Pool } from "./account-quota.js";

/**
 * The key service's account layer: account-page keys spend their pool's uses and rate limit
 * (quotaPool: the account's own on a paid plan, its mailbox's on the free one; all their keys
 * together, rolls included), after the key's own limits if it has any. Other keys (made with
 * `almanac keys create`) have only their own. The embedded store spends the pool's uses itself,
 * with the key's (`account.spent`); for Unkey, which holds no pools, they are spent here.
 */
export class Pooled implements KeyVerifier {
  /** This process's calls that hold a pool's uses until its rate limit decides, by pool. */
  private readonly holding = new Map<string, Set<Promise<void>>>();

  constructor(
    private readonly quotas: AccountQuotas,
    private readonly limiter: RateLimiter,
    private readonly inner: KeyVerifier,
  ) {}

  async verify(key: string, permission?: string, opts: VerifyOptions = {}): Promise<KeyVerification> {
    const v = await this.inner.verify(key, permission, opts);
    if (v.kind !== "verdict") return v;
    const cost = opts.cost ?? 1;
    // A passing call holds uses (its key's, then its account's) until the account's rate limit
    // has decided; marked at once, before anything else is awaited, so that a concurrent call
    // refused for uses can wait for it (see ratherRateLimited).
    const release = v.code === "VALID" && v.account && cost > 0 ? this.hold(v.account.pool) : undefined;
    try {
      return await this.decide(v, cost, release, opts.claim);
    } finally {
      release?.();
    }
  }

  private async decide(
    v: KeyVerification & { kind: "verdict" },
    cost: number,
    release: (() => void) | undefined,
    claim: HeldClaim | undefined,
  ): Promise<KeyVerification> {
    if (v.code !== "VALID" || !v.keyId) {
      if (v.code !== "USAGE_EXCEEDED" || !v.keyId || cost === 0) return v;
      // Out of the key's own uses: maybe held by calls that the account's rate limit is refusing.
      const pool = v.account !== undefined ? await this.quotas.poolFrom(v.account) : await this.quotas.poolOf(v.keyId);
      return pool ? this.ratherRateLimited(v, pool) : v;
    }
    // The embedded store read the account with the key (one query); others are asked here.
    const pool = v.account !== undefined ? await this.quotas.poolFrom(v.account) : await this.quotas.poolOf(v.keyId);
    if (!pool) return v;
    // Refused by the account after the key spent a use of its own: that use goes back.
    const refuse = async <T extends KeyVerification>(answer: T): Promise<T> => {
      if (cost > 0 && v.remaining != null) await this.inner.refund(v.keyId as string, cost);
      return answer;
    };
    const exhausted = { ...v, code: "USAGE_EXCEEDED" as const, remaining: 0 };
    // The account's uses are spent first, then its rate limit is asked; a refusal by the rate
    // limit gives the uses back. The embedded store spent them with the key (`account.spent`);
    // for Unkey they are spent here. So a call never holds a point of the rate limit while it is
    // refused for uses: every point the limiter grants is served.
    let spent = cost > 0 ? v.account?.spent : undefined;
    let remaining = pool.remaining;
    if (spent === undefined && cost > 0 && remaining !== null) {
      const left = await this.quotas.spend(pool.id, cost);
      spent = left !== undefined;
      if (left !== undefined) remaining = left;
    }
    // Too few uses left: maybe held by calls that the rate limit is refusing.
    if (spent === false) {
      // It holds nothing now (its key's own use goes back first): it stops being waited for
      // before it waits for the others, so two such calls never wait for each other.
      await refuse(exhausted);
      release?.();
      return this.ratherRateLimited(exhausted, pool);
    }
    const rule = accountRule(pool);
    const d = await this.limiter.consume(rule, pool.id);
    const ratelimit = tighter(v.ratelimit, accountState(rule, d));
    if (!d.allowed) {
      const limited = { ...v, code: "RATE_LIMITED" as const, ratelimit };
      // The store recorded the charge on the call's claim: it gives back what it spent and clears
      // that record in one transaction, so a claim left behind (this process dies, the database
      // goes away before the claim is released) never says "paid" for uses given back.
      if (v.claimCharged && claim) {
        await this.inner.refund(v.keyId, cost, { claim, ...(spent && { pool: pool.id }) });
        return limited;
      }
      if (spent) await this.quotas.credit(pool.id, cost);
      return refuse(limited);
    }
    return { ...v, remaining: fewer(v.remaining ?? null, remaining), ratelimit };
  }

  /** Marks a call of this process as holding `pool`'s uses; the function returned ends it (once or more). */
  private hold(pool: string): () => void {
    let settle = () => {};
    const call = new Promise<void>((resolve) => {
      settle = resolve;
    });
    const calls = this.holding.get(pool) ?? new Set();
    calls.add(call);
    this.holding.set(pool, calls);
    return () => {
      calls.delete(call);
      if (calls.size === 0 && this.holding.get(pool) === calls) this.holding.delete(pool);
      settle();
    };
  }

  /**
   * A USAGE_EXCEEDED whose uses (the key's own, or its account's) were spent first and may be
   * held by concurrent calls that the account's rate limit is refusing — they give them back.
   * With the account's window full the call is rate limited too, and so told: `RATE_LIMITED`, as
   * the limiter-first order answers, never a USAGE_EXCEEDED (Retry-After an hour) while uses are
   * coming back. Reads the window, spends nothing.
   */
  private async ratherRateLimited<T extends KeyVerification & { kind: "verdict" }>(
    v: T,
    pool: Pool,
  ): Promise<T | (T & { code: "RATE_LIMITED" })> {
    // The holders in this process settle first (served, or refused and given back), so the
    // window read below counts them; holders in other instances may still be deciding (the
    // reason can then be USAGE_EXCEEDED while uses are coming back).
    const holders = this.holding.get(pool.id);
    if (holders) await Promise.all([...holders]);
    const rule = accountRule(pool);
    const peek = await this.limiter.consume(rule, pool.id, 0);
    if (peek.remaining > 0) return v;
    return { ...v, code: "RATE_LIMITED", ratelimit: tighter(v.ratelimit, accountState(rule, peek)) };
  }

  /** A refund: to the key's own uses if it has any, and to its account's (unless set since the call was charged). */
  async refund(id: string, uses: number, refund: Refund = {}): Promise<boolean> {
    if (refund.claim) {
      // The store recorded the charge on the claim: it gives the pool's uses back too, with the rest.
      const pool = await this.quotas.poolOf(id);
      return this.inner.refund(id, uses, { ...refund, ...(pool?.remaining != null && { pool: pool.id }) });
    }
    const found = await this.inner.refund(id, uses, refund);
    const pool = found ? await this.quotas.poolOf(id) : undefined;
    if (pool && pool.remaining !== null) await this.quotas.credit(pool.id, uses, refund.chargedAt);
    return found;
  }
}

/** The account's rate limit, as the shared limiter's rule `account` keyed by the account. */
const accountRule = (pool: Pool): LimitRule => ({
  name: "account",
  points: pool.plan.ratelimit.limit,
  durationSec: pool.plan.ratelimit.durationSec,
});

const accountState = (rule: LimitRule, d: LimitDecision): KeyRateLimitState => ({
  limit: d.limit,
  remaining: d.remaining,
  resetMs: d.resetMs,
  name: "account",
  durationSec: rule.durationSec,
});

/** The rate-limit window that binds first. */
function tighter(a: KeyRateLimitState | undefined, b: KeyRateLimitState): KeyRateLimitState {
  return a && a.remaining < b.remaining ? a : b;
}
