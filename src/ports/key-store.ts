/**
 * API keys, as stored: the storage port the key service (src/features/keys/service.ts) sits on.
 * Two adapters implement it, the embedded store (database) and Unkey, and they only store: look a
 * key up and spend its own uses and rate limit, give uses back, create, list, revoke, roll, edit.
 * Both give the same verdicts. Accounts, plans, usage counts and the invalid-key throttle are the
 * service's layers over it (`KeyVerifier`), composed in the open by the composition root.
 */

import type { HeldClaim } from "./idempotency.js";

/** Unkey's verdict codes; the embedded store gives the same. */
export type KeyVerdict =
  | "VALID"
  | "NOT_FOUND"
  | "EXPIRED"
  | "DISABLED"
  | "INSUFFICIENT_PERMISSIONS"
  | "RATE_LIMITED"
  | "USAGE_EXCEEDED";

export interface KeyRateLimitState {
  limit: number;
  remaining: number;
  /** Milliseconds until the key's window resets. */
  resetMs: number;
  /** The limit's name in the RateLimit headers: `key` (the key's own) or `account`. */
  name?: string;
  /** The window's length, when the store says it. */
  durationSec?: number;
}

export type KeyVerification =
  | {
      /** The store answered. `code` tells whether the key may proceed (`VALID`). */
      kind: "verdict";
      code: KeyVerdict;
      keyId?: string;
      ownerId?: string | null;
      /** The UTC hour (`2026-11-22T23`) a charged call was counted in, for its refund (`refund`). */
      countedIn?: string;
      /** When a charged call was charged (ISO), for its refund (`refund`). */
      chargedAt?: string;
      /** Uses left after this one; null = unlimited. */
      remaining?: number | null;
      ratelimit?: KeyRateLimitState;
      /**
       * The key's row in the account ledger, when the store read it with the key (the embedded
       * store does, in the same query): null for a key made outside the account page; undefined
       * when the store did not look (Unkey), and the caller reads it itself.
       */
      account?: AccountRow | null;
      /**
       * Set on a VALID verdict of a charged call made for an Idempotency-Key claim
       * (`VerifyOptions.claim`) when the store recorded the charge on the claim in the statement or
       * transaction that spent the uses: true, recorded; false, the claim is no longer this
       * request's (the uses were spent all the same). Unset: the store records nothing (Unkey).
       */
      claimCharged?: boolean;
    }
  /** The verifier could not answer (down, timeout, garbage): never a pass, never a rejection. */
  | { kind: "unavailable"; detail: string; store?: KeyStoreKind };

/** A key's account, as the ledger and `account_quotas` hold it. */
export interface AccountRow {
  ownerId: string;
  /** The row of `account_quotas` its keys spend: the account on a paid plan, its mailbox on the free one. */
  pool: string;
  /** The plan's name as stored. */
  plan: string;
  /** Whether the account has its row of uses yet (it is opened on first use). */
  opened: boolean;
  /** Uses left in the pool (when opened); null = unlimited. After the spend when `spent`. */
  remaining: number | null;
  /**
   * On a VALID verdict of a charged call, set when the store spent this call's cost from the
   * pool's uses itself (the embedded store always does, with the key's own): true, spent (the
   * account layer gives it back if the account's rate limit refuses the call); false, too few
   * uses were left. Unset (Unkey, which holds no pools): the account layer spends.
   */
  spent?: boolean;
}

/** Which key store answered (named in the 503 `unkey_unavailable` message). */
export type KeyStoreKind = "embedded" | "unkey";

export interface KeyInfo {
  id: string;
  name: string;
  ownerId: string | null;
  /** `alm_` + first characters, for display: `alm_3xY…9Kq2` = prefix…last4. */
  prefix: string;
  last4: string;
  permissions: string[];
  createdAt: string;
  expiresAt: string | null;
  lastUsedAt: string | null;
  remaining: number | null;
  ratelimit: { limit: number; durationSec: number } | null;
  status: "active" | "revoked" | "expired" | "exhausted";
  /** The key this one replaced in a roll (old → new); null when it was created. */
  replaces: string | null;
}

export interface CreateKeyInput {
  name: string;
  ownerId?: string | null;
  permissions: string[];
  expiresAt?: string | null;
  remaining?: number | null;
  ratelimit?: { limit: number; durationSec: number } | null;
}

export interface CreatedKey extends KeyInfo {
  /** The plaintext key: shown once, never stored. */
  key: string;
}

export interface VerifyOptions {
  /**
   * Uses to spend when the key is VALID (default 1). 0 verifies without spending a use: an
   * idempotent replay or a request whose body is invalid (the job will not run).
   */
  cost?: number;
  /**
   * The Idempotency-Key claim this call is charged for: a store that can records the charge on it
   * with the spend itself (`claimCharged`), so that a request taking the claim over after this
   * one's answer was lost (its connection cut after the commit) knows it was paid.
   */
  claim?: HeldClaim;
}

export interface RollOptions {
  /** Seconds the old key keeps working after the roll (0, the default: revoked at once, for a leak). */
  graceSec?: number;
}

/**
 * A change to a key after its creation: only the fields given change. The key and its pair from a
 * roll share remaining uses and rate limit, so setting them on either sets them for both.
 */
export interface KeyUpdate {
  name?: string;
  /** null: never expires. */
  expiresAt?: string | null;
  permissions?: string[];
  /** null: unlimited. */
  remaining?: number | null;
  /** null: no rate limit of its own. */
  ratelimit?: { limit: number; durationSec: number } | null;
}

/** The hot path: verify a key (spending `cost` uses) and give uses back. Every layer of the service implements it. */
export interface KeyVerifier {
  /** Verifies `key`; when `permission` is given the key must hold it. Spends `cost` uses on VALID. */
  verify(key: string, permission?: string, opts?: VerifyOptions): Promise<KeyVerification>;
  /**
   * Gives back `uses` spent uses (a refund: the charged job did not complete). A no-op for a key
   * without a usage limit; false when there is no such key, or nothing was given back because the
   * call's claim was taken over (`Refund.claim`). Throws when the store cannot answer.
   * `refund.countedIn`: the hour the refunded call was counted in (the counting layer takes it out there).
   */
  refund(id: string, uses: number, refund?: Refund): Promise<boolean>;
}

/** The storage port: what the embedded and Unkey adapters implement. */
export interface KeyStore extends KeyVerifier {
  create(input: CreateKeyInput): Promise<CreatedKey>;
  /** Keys of one owner, or every key when `ownerId` is undefined (operator CLI). */
  list(ownerId?: string | null): Promise<KeyInfo[]>;
  /** Revokes; with `ownerId`, only that owner's key (else false, as if it did not exist). */
  revoke(id: string, ownerId?: string | null): Promise<boolean>;
  /**
   * Issues a replacement with the same settings in one step; the old key is revoked at once, or
   * with `graceSec` expires that many seconds later. The replacement keeps the old key's own
   * expiry, and the two share one count of remaining uses and one rate limit. A key rolls once:
   * null when it was rolled, revoked or expired already, or is not this owner's.
   */
  roll(id: string, ownerId?: string | null, opts?: RollOptions): Promise<CreatedKey | null>;
  /** Changes a key; with `ownerId`, only that owner's key. Null when there is no such key. */
  update(id: string, patch: KeyUpdate, ownerId?: string | null): Promise<KeyInfo | null>;
}

/** What a refund gives back: the call it takes out of the counts, from the hour it was counted in. */
export interface Refund {
  /** The verification's `countedIn`; unset: the current hour. */
  countedIn?: string;
  /**
   * When the refunded call was charged (ISO; the verification's `chargedAt`): uses set since (an
   * operator's `keys update --remaining`, a plan change) are the new count, and get nothing back.
   */
  chargedAt?: string;
  /**
   * The account pool (`AccountRow.pool`) the store spent the call's uses from with the key's
   * (`account.spent`): given back with them. A store that spends no pools ignores it.
   */
  pool?: string;
  /**
   * The Idempotency-Key claim the store recorded the call's charge on (`claimCharged`; only then):
   * the record is cleared with the give-back, in one transaction, so the claim never says the call
   * was paid once its uses are back, nor the other way round (a request taking the claim over pays
   * exactly when they are). Nothing is given back (false) once the claim is no longer its holder's:
   * the request that took it over relies on that charge. The store gives back all it spent for the
   * call in that transaction, the pool's uses included (`pool`: such a store spends pools itself).
   */
  claim?: HeldClaim;
}
