/** The text forms of a key's limits, shared by the CLI and the account page's forms. */

/** `N/SECONDS` (100/60: 100 calls a minute), or undefined when it is not that. */
export function parseRatelimit(value: string): { limit: number; durationSec: number } | undefined {
  const m = /^(\d{1,9})\/(\d{1,9})$/.exec(value.trim());
  if (!m || Number(m[1]) < 1 || Number(m[2]) < 1) return undefined;
  return { limit: Number(m[1]), durationSec: Number(m[2]) };
}

/** A whole number of uses, or undefined when it is not that. */
export function parseUses(value: string): number | undefined {
  return /^\d{1,12}$/.test(value.trim()) ? Number(value.trim()) : undefined;
}

/** Words that clear a limit or an expiry (no limit of its own, never expires). */
export const CLEAR_WORDS = new Set(["", "none", "unlimited", "never"]);
