/** The text forms of a key's limits, shared by the CLI and the account page's forms. */

/** `N/SECONDS` (100/60: 100 calls a minute), or undefined when it is not that. */
export function parseRatelimit(value: string): { limit: number; durationSec: number } | undefined {
  const m = /^(\d{1,9})\/(\d{1,9})$/.exec(value.trim());
  if (!m || Number(m[1]) < 1 || Number(m[2]) < 1) return undefined;
  return { limit: Number(m[1]), durationSec: Number(m[2]) };
}

/**
 * Not printable: control characters (C0, DEL and C1: U+009B is a terminal's CSI, and names reach
 * the operator's `almanac keys list`) and the bidirectional marks, overrides and isolates that
 * show a name other than it is (on the page, in reminder mail).
 */
const UNPRINTABLE = /[\p{Cc}\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/u;

/** A key name (trimmed): 1 to 64 printable characters. */
export const isKeyName = (name: string): boolean => name.length >= 1 && name.length <= 64 && !UNPRINTABLE.test(name);

export const KEY_NAME_RULE = "A key name is 1 to 64 printable characters.";

/** The most uses a key holds: its column is an integer on PostgreSQL (SQLite would take more). */
export const MAX_USES = 2_147_483_647;

/** A whole number of uses (at most MAX_USES), or undefined when it is not that. */
export function parseUses(value: string): number | undefined {
  const n = /^\d{1,12}$/.test(value.trim()) ? Number(value.trim()) : undefined;
  return n !== undefined && n <= MAX_USES ? n : undefined;
}

/** Words that clear a limit or an expiry (no limit of its own, never expires). */
export const CLEAR_WORDS = new Set(["", "none", "unlimited", "never"]);
