import type { Context } from "hono";
import type { HeldClaim } from "../ports/idempotency.js";
import type { KeyRateLimitState, KeyStoreKind, KeyVerification, KeyVerifier } from "../ports/key-store.js";
import { type Contract, type ErrorExample, errorAnswer, retryAfterHeader } from "./contract.js";
import { ApiError } from "./errors.js";
import { KEY_RATE_LIMIT_DOCS, keyRateLimitHeaders } from "./rate-limit-headers.js";

export const MISSING_KEY_MESSAGE =
  "Missing or malformed Authorization header: send `Authorization: Bearer <token>` with a valid API key.";
/**
 * The spec's "message text for a rejected key", and its key rejections are all three reasons:
 * `INVALID` (401), `RATE_LIMITED` and `USAGE_EXCEEDED` (429). The reason tells them apart.
 */
export const REJECTED_KEY_MESSAGE = "API key was rejected.";

/** The 503 `unkey_unavailable` message, naming the key store in use (the code stays the spec's). */
export function unavailableMessage(store?: KeyStoreKind): string {
  if (store === "embedded") {
    return "Key verification is temporarily unavailable: the embedded key store's database is not answering; retry shortly.";
  }
  if (store === "unkey") return "Key verification is temporarily unavailable: Unkey is not answering; retry shortly.";
  return "Key verification is temporarily unavailable; retry shortly.";
}

/** Seconds a client should wait after a usage-exhausted key (its quota does not refill by itself). */
const USAGE_RETRY_AFTER_SEC = 3600;
const UNAVAILABLE_RETRY_AFTER_SEC = 2;

/** `Bearer <token>` with exactly one space (docs/api.md, classify's answers); anything else is malformed (null). */
export function parseBearer(header: string | undefined): string | null {
  if (header === undefined) return null;
  const match = /^Bearer ([^\s]+)$/i.exec(header);
  return match?.[1] ?? null;
}

export interface AuthenticatedKey {
  keyId: string;
  ownerId: string | null;
  remaining: number | null;
  /** The hour a charged call was counted in: its refund takes it out of that hour (`KeyVerifier.refund`). */
  countedIn?: string;
  /** When a charged call was charged: its refund gives nothing back to uses set since (`KeyVerifier.refund`). */
  chargedAt?: string;
  /** Whether the store recorded the charge on the call's Idempotency-Key claim (`KeyVerification.claimCharged`). */
  claimCharged?: boolean;
}

/**
 * The auth table (docs/api.md, `POST /v1/vibe/classify`), identical for both key stores: turns a
 * verification into the key, or throws the exact ApiError (status, code, reason, message, Retry-After).
 */
export function acceptVerification(v: KeyVerification, permission?: string): AuthenticatedKey {
  if (v.kind === "unavailable") {
    throw new ApiError("unkey_unavailable", unavailableMessage(v.store), {
      cause: `key store: ${v.detail}`,
      headers: { "Retry-After": String(UNAVAILABLE_RETRY_AFTER_SEC) },
    });
  }
  switch (v.code) {
    case "VALID":
      return {
        keyId: v.keyId ?? "unknown",
        ownerId: v.ownerId ?? null,
        remaining: v.remaining ?? null,
        ...(v.countedIn !== undefined && { countedIn: v.countedIn }),
        ...(v.chargedAt !== undefined && { chargedAt: v.chargedAt }),
        ...(v.claimCharged !== undefined && { claimCharged: v.claimCharged }),
      };
    case "NOT_FOUND":
    case "EXPIRED":
    case "DISABLED":
      throw new ApiError("unauthorized", REJECTED_KEY_MESSAGE, { reason: "INVALID" });
    case "INSUFFICIENT_PERMISSIONS":
      throw new ApiError(
        "forbidden",
        permission ? `API key lacks the permission "${permission}".` : "API key lacks the permission for this route.",
      );
    case "RATE_LIMITED": {
      const seconds = Math.max(1, Math.ceil((v.ratelimit?.resetMs ?? 1000) / 1000));
      throw new ApiError("rate_limited", REJECTED_KEY_MESSAGE, {
        reason: "RATE_LIMITED",
        headers: { "Retry-After": String(seconds) },
      });
    }
    case "USAGE_EXCEEDED":
      throw new ApiError("rate_limited", REJECTED_KEY_MESSAGE, {
        reason: "USAGE_EXCEEDED",
        headers: { "Retry-After": String(USAGE_RETRY_AFTER_SEC) },
      });
  }
}

/** The bearer token of a route that requires a key; a missing or malformed header is the 401 without a reason. */
export function bearerToken(authorization: string | undefined): string {
  const token = parseBearer(authorization);
  if (token === null) throw new ApiError("unauthorized", MISSING_KEY_MESSAGE);
  return token;
}

export interface VerifiedKey extends AuthenticatedKey {
  /** The key's rate limit as this verification spent it, when it has one. */
  ratelimit?: KeyRateLimitState;
}

/**
 * Verifies `token` for a route that requires a key, and puts the key's rate limit as this
 * verification spent it (`RateLimit`, `RateLimit-Policy`) on whatever the route answers from
 * here on, its refusal included.
 */
export async function verifyKey(
  c: Context,
  keys: KeyVerifier,
  token: string,
  opts: { permission?: string; cost: number; claim?: HeldClaim },
): Promise<VerifiedKey> {
  const v = await keys.verify(token, opts.permission, { cost: opts.cost, ...(opts.claim && { claim: opts.claim }) });
  if (v.kind === "verdict" && v.keyId && v.ownerId) c.set("calledKey", { keyId: v.keyId, ownerId: v.ownerId });
  const ratelimit = v.kind === "verdict" ? v.ratelimit : undefined;
  if (ratelimit) for (const [name, value] of Object.entries(keyRateLimitHeaders(ratelimit))) c.header(name, value);
  return { ...acceptVerification(v, opts.permission), ...(ratelimit && { ratelimit }) };
}

/** The answers of a key verification, one example each (shared by the routes and the demo tier). */
export const KEY_ANSWERS = {
  missing: { code: "unauthorized", message: MISSING_KEY_MESSAGE },
  rejected: { code: "unauthorized", message: REJECTED_KEY_MESSAGE, reason: "INVALID" },
  rateLimited: { code: "rate_limited", message: REJECTED_KEY_MESSAGE, reason: "RATE_LIMITED" },
  usageExceeded: { code: "rate_limited", message: REJECTED_KEY_MESSAGE, reason: "USAGE_EXCEEDED" },
  unavailable: { code: "unkey_unavailable", message: unavailableMessage() },
} satisfies Record<string, ErrorExample>;

/**
 * What a route that requires a key (`verifyKey`) adds to its document: the refusals of the
 * verification, the key's RateLimit headers on every answer after it, and that a key is required.
 * `charged`: calls spend a use, so an exhausted key is refused (429 USAGE_EXCEEDED).
 */
export function keyAuthContract(opts: { permission?: string; charged: boolean }): Contract {
  const { missing, rejected, rateLimited, usageExceeded, unavailable } = KEY_ANSWERS;
  return {
    security: [{ bearer: [] }],
    stamps: [{ headers: KEY_RATE_LIMIT_DOCS }],
    answers: {
      "401": errorAnswer("No key, a malformed `Authorization` header, or a rejected key.", { missing, rejected }),
      ...(opts.permission && {
        "403": errorAnswer(
          "The key lacks the permission for this route.",
          { forbidden: { code: "forbidden", message: `API key lacks the permission "${opts.permission}".` } },
          KEY_RATE_LIMIT_DOCS,
        ),
      }),
      "429": errorAnswer(
        opts.charged ? "The key's rate limit or its uses are exhausted." : "The key's rate limit is reached.",
        opts.charged ? { rateLimited, usageExceeded } : { rateLimited },
        { "Retry-After": retryAfterHeader(), ...KEY_RATE_LIMIT_DOCS },
      ),
      "503": errorAnswer(
        "Key verification is temporarily down.",
        { unavailable },
        { "Retry-After": retryAfterHeader() },
      ),
    },
  };
}
