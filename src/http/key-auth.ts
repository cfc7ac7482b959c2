import type { KeyStore, KeyStoreKind, KeyVerification } from "../ports/key-store.js";
import { ApiError } from "./errors.js";

export const MISSING_KEY_MESSAGE =
  "Missing or malformed Authorization header: send `Authorization: Bearer <token>` with a valid API key.";
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
      return { keyId: v.keyId ?? "unknown", ownerId: v.ownerId ?? null, remaining: v.remaining ?? null };
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
      throw new ApiError("rate_limited", "API key rate limit reached; retry later.", {
        reason: "RATE_LIMITED",
        headers: { "Retry-After": String(seconds) },
      });
    }
    case "USAGE_EXCEEDED":
      throw new ApiError("rate_limited", "API key has no remaining uses.", {
        reason: "USAGE_EXCEEDED",
        headers: { "Retry-After": String(USAGE_RETRY_AFTER_SEC) },
      });
  }
}

/** Reads the bearer token and verifies it (on every call: no cached verdicts, so a revoked key stops at once). */
export async function authenticate(
  keys: KeyStore,
  authorization: string | undefined,
  permission?: string,
): Promise<AuthenticatedKey> {
  const token = parseBearer(authorization);
  if (token === null) throw new ApiError("unauthorized", MISSING_KEY_MESSAGE);
  return acceptVerification(await keys.verify(token, permission), permission);
}
