import { type Kysely, sql } from "kysely";
import type { DB } from "../../db/schema.js";
import { ScheduledFlush } from "../../lib/scheduled-flush.js";

export interface UsageCounts {
  last24h: number;
  last30d: number;
  /** Start of the newest hour with a charged call, or null. */
  lastHour: string | null;
}

/** Calls per UTC day per key from `from` (YYYY-MM-DD): charged ones and refused ones. */
export interface DailyCounts {
  from: string;
  perDay: Map<string, number[]>;
  refusedPerDay: Map<string, number[]>;
}

const HOUR_MS = 3_600_000;
const KEEP_DAYS = 31;

/** `2026-11-22T23`: the UTC hour a call is counted in. */
export const hourOf = (d: Date): string => d.toISOString().slice(0, 13);

/**
 * Charged calls per key per UTC hour. `record` only adds to an in-memory tally (no I/O on the
 * request path); the tally is written as one upsert per key and hour every `flushMs` (and before
 * every read and at close), so instances add up in the shared database. Rows older than 31 days
 * are pruned when the hour changes. A crash loses at most `flushMs` of counts; quota itself is
 * exact (it lives in the key store).
 */
export class UsageCounter {
  private pending = new Map<string, { allowed: number; refused: number }>();
  private readonly writes: ScheduledFlush;
  private prunedHour = "";

  constructor(
    private readonly db: Kysely<DB>,
    private readonly opts: { now?: () => Date; flushMs?: number; onError?: (err: unknown) => void } = {},
  ) {
    this.writes = new ScheduledFlush(() => this.write(), { delayMs: opts.flushMs, onError: opts.onError });
  }

  /** This counter's clock. */
  now(): Date {
    return this.opts.now?.() ?? new Date();
  }

  /** The UTC hour a call is counted in now (a refund names the hour of its call: `record`'s `hour`). */
  hour(): string {
    return hourOf(this.now());
  }

  /**
   * Counts `n` calls of the key: charged (allowed), or refused by the key store; `refunded` takes
   * back charged calls whose use was given back (their job failed), so they are not counted as
   * charged — from `hour`, the hour they were counted in (a job may end in the next hour).
   */
  record(keyId: string, outcome: "allowed" | "refused" | "refunded" = "allowed", n = 1, hour = this.hour()): void {
    const slot = `${keyId}\u0000${hour}`;
    const tally = this.pending.get(slot) ?? { allowed: 0, refused: 0 };
    if (outcome === "refunded") tally.allowed -= n;
    else tally[outcome] += n;
    this.pending.set(slot, tally);
    this.writes.schedule();
  }

  /** Writes the tally; counts that fail to write are kept for the next flush. */
  flush(): Promise<void> {
    return this.writes.flush();
  }

  private async write(): Promise<void> {
    const batch = this.pending;
    this.pending = new Map();
    for (const [slot, n] of batch) {
      const [keyId = "", hour = ""] = slot.split("\u0000");
      try {
        await this.db
          .insertInto("key_usage")
          .values({ key_id: keyId, hour, count: n.allowed, refused: n.refused })
          .onConflict((oc) =>
            oc.columns(["key_id", "hour"]).doUpdateSet({
              count: sql`key_usage.count + ${n.allowed}`,
              refused: sql`key_usage.refused + ${n.refused}`,
            }),
          )
          .execute();
      } catch (err) {
        const kept = this.pending.get(slot) ?? { allowed: 0, refused: 0 };
        this.pending.set(slot, { allowed: kept.allowed + n.allowed, refused: kept.refused + n.refused });
        throw err;
      }
    }
    const hour = hourOf(this.now());
    if (hour !== this.prunedHour) {
      this.prunedHour = hour;
      await this.prune();
    }
  }

  /** Deletes counts older than 31 days; returns how many rows went. */
  async prune(): Promise<number> {
    const cutoff = hourOf(new Date(this.now().getTime() - KEEP_DAYS * 24 * HOUR_MS));
    const res = await this.db.deleteFrom("key_usage").where("hour", "<", cutoff).executeTakeFirst();
    return Number(res.numDeletedRows);
  }

  /** Counts over the last 24 hours and 30 days (by UTC hour, the current one included). */
  async counts(keyIds: string[]): Promise<Map<string, UsageCounts>> {
    await this.flush();
    const out = new Map<string, UsageCounts>(keyIds.map((id) => [id, { last24h: 0, last30d: 0, lastHour: null }]));
    if (keyIds.length === 0) return out;
    const now = this.now().getTime();
    const dayFrom = hourOf(new Date(now - 23 * HOUR_MS));
    const monthFrom = hourOf(new Date(now - (30 * 24 - 1) * HOUR_MS));
    const rows = await this.db
      .selectFrom("key_usage")
      .select(["key_id", "hour", "count"])
      .where("key_id", "in", keyIds)
      .where("hour", ">=", monthFrom)
      .execute();
    for (const r of rows) {
      const c = out.get(r.key_id);
      if (!c) continue;
      if (Number(r.count) === 0) continue; // an hour of refused calls only
      c.last30d += Number(r.count);
      if (r.hour >= dayFrom) c.last24h += Number(r.count);
      if (c.lastHour === null || r.hour > c.lastHour) c.lastHour = r.hour;
    }
    return out;
  }

  /**
   * Charged calls per UTC day over the last `days` days, today last, per key: `from` is the first
   * day (`2026-10-27`), `perDay` has `days` entries, `refusedPerDay` the refused calls likewise
   * (account page chart).
   */
  async daily(keyIds: string[], days = 30): Promise<DailyCounts> {
    await this.flush();
    const today = Date.parse(`${this.now().toISOString().slice(0, 10)}T00:00:00Z`);
    const from = new Date(today - (days - 1) * 24 * HOUR_MS).toISOString().slice(0, 10);
    const perDay = new Map(keyIds.map((id) => [id, new Array<number>(days).fill(0)]));
    const refusedPerDay = new Map(keyIds.map((id) => [id, new Array<number>(days).fill(0)]));
    if (keyIds.length === 0) return { from, perDay, refusedPerDay };
    const rows = await this.db
      .selectFrom("key_usage")
      .select(["key_id", "hour", "count", "refused"])
      .where("key_id", "in", keyIds)
      .where("hour", ">=", `${from}T00`)
      .execute();
    const first = Date.parse(`${from}T00:00:00Z`);
    for (const r of rows) {
      const day = Math.floor((Date.parse(`${r.hour.slice(0, 10)}T00:00:00Z`) - first) / (24 * HOUR_MS));
      const counts = perDay.get(r.key_id);
      const refused = refusedPerDay.get(r.key_id);
      if (!counts || !refused || day < 0 || day >= days) continue;
      counts[day] = (counts[day] ?? 0) + Number(r.count);
      refused[day] = (refused[day] ?? 0) + Number(r.refused);
    }
    return { from, perDay, refusedPerDay };
  }

  close(): Promise<void> {
    return this.writes.close();
  }
}
