import { ApiError } from "../../http/errors.js";
import type { PlanName } from "./plans.js";

/** Why AccountKeys refused a change: returned as a value, worded here for the account page and the CLI. */
export type KeyRefusal =
  /** No such key for this actor (or, for a roll, not an active one). Each caller words it. */
  | { kind: "not_found" }
  | { kind: "duplicate_name" }
  | { kind: "key_limit"; plan: PlanName; limit: number }
  | { kind: "daily_limit"; plan: PlanName; limit: number; retryAfterSec: number }
  /** The key's predecessor (prefix…last4) is still in its grace period. */
  | { kind: "roll_in_progress"; previous: string }
  | { kind: "expiry_in_past" }
  /** An edit beyond the plan: `allows` says what the plan allows. */
  | { kind: "plan_limit"; plan: PlanName; allows: string }
  /** A rolled key ends with its grace period: its expiry cannot change. */
  | { kind: "rolled" }
  /**
   * A key the operator issued to the account: only the operator changes its limits, expiry and
   * permissions (`edit`), and one with limits of its own rolls without a grace period (`roll`:
   * at Unkey both keys would hold a copy of them meanwhile).
   */
  | { kind: "operator_key"; action: "edit" | "roll" };

export type WordedRefusal = Exclude<KeyRefusal, { kind: "not_found" }>;

/** The refusal in words, as the account page and the CLI show it. */
export function keyRefusalMessage(r: WordedRefusal): string {
  switch (r.kind) {
    case "duplicate_name":
      return "You already have an active key with this name: choose another name.";
    case "key_limit":
      return `The ${r.plan} plan allows ${r.limit} active keys: revoke one first, or upgrade your plan.`;
    case "daily_limit":
      return `The ${r.plan} plan allows ${r.limit} new keys a day: try again later, or upgrade your plan.`;
    case "roll_in_progress":
      return `A key this one replaced (${r.previous}) is still in its grace period: revoke it first, or roll without a grace period.`;
    case "expiry_in_past":
      return "The new expiry is in the past: choose a later time, or revoke the key.";
    case "plan_limit":
      return `The ${r.plan} plan allows ${r.allows}: choose less, or upgrade your plan.`;
    case "rolled":
      return "This key was rolled and ends with its grace period: its expiry cannot change. Revoke it, or edit its replacement.";
    case "operator_key":
      return r.action === "edit"
        ? "This key was issued by the operator: its uses, rate limit, expiry and permissions are theirs to change. You can rename or revoke it."
        : "This key was issued by the operator with limits of its own: roll it without a grace period (the old key stops at once), or ask the operator.";
  }
}

/** The refusal as the account page answers it (status, code, reason, Retry-After). */
export function keyRefusalError(r: WordedRefusal): ApiError {
  const message = keyRefusalMessage(r);
  switch (r.kind) {
    case "expiry_in_past":
      return new ApiError("invalid_body", message);
    case "daily_limit":
      return new ApiError("rate_limited", message, {
        reason: "KEY_CREATION_LIMIT",
        headers: { "Retry-After": String(r.retryAfterSec) },
      });
    case "duplicate_name":
      return new ApiError("conflict", message, { reason: "DUPLICATE_NAME" });
    case "key_limit":
      return new ApiError("conflict", message, { reason: "KEY_LIMIT" });
    case "roll_in_progress":
      return new ApiError("conflict", message, { reason: "ROLL_IN_PROGRESS" });
    case "plan_limit":
      return new ApiError("conflict", message, { reason: "PLAN_LIMIT" });
    case "rolled":
      return new ApiError("conflict", message, { reason: "ROLLED" });
    case "operator_key":
      return new ApiError("conflict", message, { reason: "OPERATOR_KEY" });
  }
}
