import { decide, type LimitDecision, type LimitRule, type RateLimiter } from "../ports/rate-limiter.js";

/** Keys counted one by one per rule before new keys share one count (about 10 MB of counters). */
export const MEMORY_LIMITER_MAX_KEYS = 50_000;

interface Window {
  used: number;
  /** Epoch ms at which this window ends. */
  resetAt: number;
}

/** One rule's counters. Windows all last the rule's duration, so the Map's order is their order of ending. */
interface Table {
  windows: Map<string, Window>;
  /** Shared by every key that arrived while `windows` was full. */
  overflow: Window | null;
}

/**
 * In-process fixed-window counters: exact on one process (the admin CLI, tests, and the fallback
 * while Redis is unreachable), with memory bounded whatever the traffic.
 *
 * rate-limiter-flexible's `RateLimiterMemory` keeps a record and a timer per key until its window
 * ends, so a flood of distinct client addresses (one request each) grows the heap for as long as a
 * window lasts — about 500 MB for 100,000 clients on the hour-long demo tier. Here a rule
 * counts at most `maxKeys` keys one by one; once that many windows are open, a key that has none
 * is counted in the rule's one overflow window, shared with every other such key. So a flood errs
 * on the side of limiting: the newcomers share one budget until windows end and free their places.
 *
 * No timers: every window of a rule lasts the same time and a key's window is (re)inserted when it
 * starts, so the Map is ordered by end time and expired windows are dropped from its front, a few
 * at a time, as decisions are taken. Semantics are rate-limiter-flexible's (and the SQLite and
 * Redis limiters'): a refused spend still counts, so `used` may exceed the rule's points.
 */
export class MemoryRateLimiter implements RateLimiter {
  private readonly tables = new Map<string, Table>();

  constructor(
    private readonly maxKeys = MEMORY_LIMITER_MAX_KEYS,
    private readonly now: () => number = Date.now,
  ) {}

  async consume(rule: LimitRule, key: string, points = 1): Promise<LimitDecision> {
    const t = this.now();
    const table = this.table(rule, t);
    let window = this.find(table, key, t);
    if (!window) {
      if (points === 0)
        return { allowed: true, limit: rule.points, remaining: rule.points, resetMs: rule.durationSec * 1000 };
      window = { used: 0, resetAt: t + rule.durationSec * 1000 };
      if (table.windows.size >= this.maxKeys) dropEnded(table, t, Number.POSITIVE_INFINITY);
      if (table.windows.size < this.maxKeys) table.windows.set(key, window);
      else if (table.overflow && table.overflow.resetAt > t) window = table.overflow;
      else table.overflow = window;
    }
    window.used += points;
    return decide(rule, window.used, window.resetAt - t);
  }

  async refund(rule: LimitRule, key: string, points = 1): Promise<void> {
    const t = this.now();
    const window = this.find(this.table(rule, t), key, t);
    if (window) window.used = Math.max(0, window.used - points);
  }

  async reset(rule: LimitRule, key: string): Promise<void> {
    this.tables.get(ruleId(rule))?.windows.delete(key);
  }

  async ready(): Promise<boolean> {
    return true;
  }

  async close(): Promise<void> {
    this.tables.clear();
  }

  /** How many keys the rule counts one by one (for tests and the bench). */
  size(rule: LimitRule): number {
    return this.tables.get(ruleId(rule))?.windows.size ?? 0;
  }

  /** The rule's table, with up to two windows that have ended dropped from its front. */
  private table(rule: LimitRule, t: number): Table {
    const id = ruleId(rule);
    let table = this.tables.get(id);
    if (!table) {
      table = { windows: new Map(), overflow: null };
      this.tables.set(id, table);
    }
    // Two per decision outpace the one window a decision can open, so ended ones do not pile up.
    dropEnded(table, t, 2);
    return table;
  }

  /** The key's open window: its own, or the overflow one when the key is not counted on its own. */
  private find(table: Table, key: string, t: number): Window | undefined {
    const own = table.windows.get(key);
    if (own) {
      if (own.resetAt > t) return own;
      table.windows.delete(key);
      return undefined;
    }
    if (table.windows.size >= this.maxKeys && table.overflow && table.overflow.resetAt > t) return table.overflow;
    return undefined;
  }
}

/** Drops up to `most` windows that have ended from the front of the table (each window is dropped once). */
function dropEnded(table: Table, t: number, most: number): void {
  let dropped = 0;
  for (const [key, window] of table.windows) {
    if (window.resetAt > t || dropped >= most) return;
    table.windows.delete(key);
    dropped++;
  }
}

/** A rule's identity: two rules with one name but other limits count apart. */
export const ruleId = (rule: LimitRule) => `${rule.name}:${rule.points}:${rule.durationSec}`;
