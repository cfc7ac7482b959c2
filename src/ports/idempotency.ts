/** What claiming an `Idempotency-Key` finds. */
export type IdempotencyClaim =
  /**
   * This request holds the claim (`owner` names it) until its lease runs out. `takeover`: the
   * claim was left by a request whose lease ran out (its process died, or the data tier went
   * away, mid-job), so that request's work may already have happened; `charged`: that request's
   * charge is with the claim (`markCharged`), so this one must not pay again.
   */
  | { kind: "owned"; owner: string; takeover: boolean; charged: boolean }
  | { kind: "replay"; status: number; body: string }
  | { kind: "mismatch" }
  /** Another request holds a live claim on this key and body. */
  | { kind: "in_progress" };

export type IdempotencyPrior = Exclude<IdempotencyClaim, { kind: "owned" }>;

/** Where a claim lives: `scope` (a route, or a route and API key) and the client's key. */
export interface IdempotencyRef {
  scope: string;
  key: string;
}

/** A claim as the request holding it names it: every write of the holder is conditioned on `owner`. */
export interface HeldClaim extends IdempotencyRef {
  owner: string;
}

/**
 * Stored `Idempotency-Key` claims and outcomes, shared by every instance. `claim` is atomic: of
 * any number of concurrent requests exactly one owns the claim. The owner holds it for a lease
 * that it `renew`s while working, then `complete`s it with its answer or `release`s it after a
 * failure. A claim whose lease ran out (its owner died) is taken over by the next request.
 */
export interface IdempotencyStore {
  claim(ref: IdempotencyRef, bodyHash: string, leaseMs: number): Promise<IdempotencyClaim>;
  /** Extends the lease; false when the claim is no longer `owner`'s (taken over or gone). */
  renew(ref: IdempotencyRef, owner: string, leaseMs: number): Promise<boolean>;
  complete(ref: IdempotencyRef, owner: string, status: number, body: string): Promise<void>;
  /** Drops the claim: the next request with this key runs afresh. */
  release(ref: IdempotencyRef, owner: string): Promise<void>;
  /** Ends the lease at once but keeps the claim: the next request takes it over (`takeover`). */
  lapse(ref: IdempotencyRef, owner: string): Promise<void>;
  /**
   * Records whether the claim holds a charge for its call (what a takeover reads as `charged`);
   * false when the claim is no longer `owner`'s (taken over or gone).
   */
  markCharged(ref: IdempotencyRef, owner: string, charged: boolean): Promise<boolean>;
}
