/** The demo tier's and a key's `RateLimit` header (IETF draft): `"demo";r=59;t=3600`. */
export interface RateLimit {
  /** The policy's name, e.g. `demo`. */
  policy: string;
  /** Calls left in the window. */
  remaining: number;
  /** Seconds until the window resets. */
  resetSeconds: number;
}

/** Parses `"demo";r=59;t=3600` (the first item when several are listed). */
export function parseRateLimit(header: string | null): RateLimit | null {
  const m = header?.match(/^\s*"?([^";,]+)"?\s*;(?=.*\br=(\d+))(?=.*\bt=(\d+))/);
  if (!m) return null;
  return { policy: m[1] as string, remaining: Number(m[2]), resetSeconds: Number(m[3]) };
}

/** An HTTP date (`Sun, 06 Nov 1994 08:49:37 GMT`, or the two obsolete forms): a weekday name comes first. */
const HTTP_DATE = /^\s*(Mon|Tue|Wed|Thu|Fri|Sat|Sun)[a-z]*,?\s/i;

/**
 * `Retry-After` in seconds: delta-seconds (a fraction such as `1.5` is taken as written) or an
 * HTTP date; null when absent or unreadable (`-1`, `soon`), so an unreadable wait is never
 * taken as "retry at once".
 */
export function parseRetryAfter(header: string | null, now = Date.now()): number | null {
  if (header === null) return null;
  const value = header.trim();
  if (/^\d+(\.\d+)?$/.test(value)) return Number(value);
  if (!HTTP_DATE.test(value)) return null;
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : Math.max(0, Math.ceil((at - now) / 1000));
}
