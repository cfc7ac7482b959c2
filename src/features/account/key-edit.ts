import { ApiError } from "../../http/errors.js";
import type { KeyUpdate } from "../../ports/key-store.js";
import { CLEAR_WORDS, isKeyName, KEY_NAME_RULE, parseRatelimit, parseUses } from "../keys/index.js";
import { field } from "./http.js";
import { EXPIRY_KEEP } from "./key-edit-view.jsx";
import { EXPIRY_CHOICES } from "./keys-views.jsx";

const DAY_MS = 86_400_000;

/** A key name from a form: 1 to 64 printable characters. */
export function keyName(body: Record<string, unknown>): string {
  const name = field(body, "name").trim();
  if (!isKeyName(name)) throw new ApiError("invalid_body", KEY_NAME_RULE);
  return name;
}

/** The expiry chosen in a form (`never`, `7d`, …) as an ISO time, or null for never. */
export function expiryChoice(body: Record<string, unknown>, nowMs: number): string | null {
  const expiry = EXPIRY_CHOICES.find((e) => e.value === (field(body, "expires") || "never"));
  if (!expiry) throw new ApiError("invalid_body", "Choose an expiry from the list.");
  return expiry.days === null ? null : new Date(nowMs + expiry.days * DAY_MS).toISOString();
}

/**
 * The key's permissions from the form's boxes: a form that marks it offered them means unticked
 * = none (a lookups-only key); one without the marker keeps `fallback`.
 */
export function permissionsOf(body: Record<string, unknown>, allowed: string[], fallback: string[] | undefined) {
  if (field(body, "permissions_offered") !== "1") return fallback;
  const wanted = ([] as unknown[]).concat(body.permission ?? []);
  if (wanted.some((p) => typeof p !== "string" || !allowed.includes(p))) {
    throw new ApiError("invalid_body", `Unknown permission: choose from ${allowed.join(", ")}.`);
  }
  return wanted as string[];
}

/**
 * `POST /account/keys/:id/update`: only the fields the form sends change. `remaining` (uses of the
 * key's own, or `unlimited` to spend only the account's) and `ratelimit` (`N/SECONDS`, or `none`).
 */
export function parseKeyEdit(body: Record<string, unknown>, allowed: string[], nowMs: number): KeyUpdate {
  const has = (name: string) => typeof body[name] === "string";
  const patch: KeyUpdate = {};
  if (has("name")) patch.name = keyName(body);
  if (has("expires") && field(body, "expires") !== EXPIRY_KEEP) patch.expiresAt = expiryChoice(body, nowMs);
  const permissions = permissionsOf(body, allowed, undefined);
  if (permissions) patch.permissions = permissions;
  if (has("remaining")) {
    const v = field(body, "remaining");
    const uses = parseUses(v);
    if (uses === undefined && !CLEAR_WORDS.has(v.trim()))
      throw new ApiError("invalid_body", "Remaining uses are a whole number, or “unlimited”.");
    patch.remaining = uses ?? null;
  }
  if (has("ratelimit")) {
    const v = field(body, "ratelimit");
    const rl = parseRatelimit(v);
    if (!rl && !CLEAR_WORDS.has(v.trim()))
      throw new ApiError("invalid_body", "A rate limit is N/SECONDS (100/60: 100 calls a minute), or “none”.");
    patch.ratelimit = rl ?? null;
  }
  if (Object.keys(patch).length === 0)
    throw new ApiError("invalid_body", "Nothing to change: send at least one field.");
  return patch;
}
