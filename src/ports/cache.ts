/**
 * A key → JSON value store with per-entry expiry (in-process LRU, or Redis shared between
 * instances). Values must survive JSON round-trips; callers treat them as immutable.
 */
export interface Cache {
  get<T>(key: string): Promise<T | undefined>;
  set<T>(key: string, value: T, ttlMs: number): Promise<void>;
}
