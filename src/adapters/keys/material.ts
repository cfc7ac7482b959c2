import { randomBytes } from "node:crypto";
import bs58 from "bs58";
import { sha256Hex } from "../../lib/hash.js";
import type { KeyInfo } from "../../ports/key-store.js";

export const KEY_PREFIX = "alm";

/** `alm_` + 160 random bits in base58: recognisable to secret scanners, no ambiguous characters. */
export const generateKey = (): string => `${KEY_PREFIX}_${bs58.encode(randomBytes(20))}`;

export const newKeyId = (): string => `key_${bs58.encode(randomBytes(12))}`;

/** The only form of a key that is stored, and the one it is looked up by: SHA-256, hex. */
export const hashKey = sha256Hex;

/** The display parts of a key: `alm_` + four characters, and the last four. */
export function displayParts(key: string): { start: string; last4: string } {
  return { start: key.slice(0, KEY_PREFIX.length + 5), last4: key.slice(-4) };
}

/** Whether `granted` covers `wanted`: exact, `*`, or a `prefix.*` wildcard (as Unkey does). */
export function hasPermission(granted: readonly string[], wanted: string): boolean {
  return granted.some((p) => p === wanted || p === "*" || (p.endsWith(".*") && wanted.startsWith(p.slice(0, -1))));
}

export function keyStatus(k: {
  revoked: boolean;
  expiresAt: string | null;
  remaining: number | null;
  now: Date;
}): KeyInfo["status"] {
  if (k.revoked) return "revoked";
  if (k.expiresAt !== null && Date.parse(k.expiresAt) <= k.now.getTime()) return "expired";
  if (k.remaining === 0) return "exhausted";
  return "active";
}
