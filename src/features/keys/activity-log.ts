import { randomUUID } from "node:crypto";
import Denque from "denque";
import { type Kysely, sql } from "kysely";
import type { DB } from "../../db/schema.js";
import { ScheduledFlush } from "../../lib/scheduled-flush.js";
import type { ActivityLogPort, AuditEntry, AuditEvent, CallEntry, CallFilter } from "../../ports/activity-log.js";

export type { AuditEntry, AuditEvent, CallEntry, CallFilter };

/** Calls kept per account (the newest), and how long any entry is kept. */
export const CALL_LOG_LIMIT = 1000;
export const AUDIT_LOG_LIMIT = 1000;
const DAY_MS = 86_400_000;
export const CALL_LOG_KEEP_MS = 30 * DAY_MS;
export const AUDIT_LOG_KEEP_MS = 365 * DAY_MS;
/** Entries of each log held in memory at most between two writes (a database down): beyond, the oldest go. */
export const MAX_PENDING = 20_000;

/**
 * The log of each account's keyed calls and the audit log of its key events. The request path
 * only appends to an in-memory list; the lists are written in batches every `flushMs` (and before
 * every read, and at close), as usage counts are, and each account's logs are trimmed to their
 * newest CALL_LOG_LIMIT / AUDIT_LOG_LIMIT entries; the expired-rows sweep deletes entries past
 * their age (ACTIVITY_EXPIRIES). A crash loses at most `flushMs` of entries.
 */
export class ActivityLog implements ActivityLogPort {
  /** Pending entries, oldest first: a ring of MAX_PENDING each, so dropping the oldest costs O(1). */
  private readonly calls = new Denque<CallEntry>();
  private readonly audits = new Denque<AuditEntry>();
  private readonly writes: ScheduledFlush;

  constructor(
    private readonly db: Kysely<DB>,
    opts: { flushMs?: number; onError?: (err: unknown) => void } = {},
  ) {
    this.writes = new ScheduledFlush(() => this.write(), { delayMs: opts.flushMs, onError: opts.onError });
  }

  recordCall(e: CallEntry): void {
    pushBounded(this.calls, e);
    this.writes.schedule();
  }

  recordAudit(e: AuditEntry): void {
    pushBounded(this.audits, e);
    this.writes.schedule();
  }

  /** Writes what is pending; what fails to write is kept for the next flush. */
  flush(): Promise<void> {
    return this.writes.flush();
  }

  close(): Promise<void> {
    return this.writes.close();
  }

  private async write(): Promise<void> {
    const calls = newestPerOwner(this.calls.toArray(), CALL_LOG_LIMIT);
    const audits = this.audits.toArray();
    this.calls.clear();
    this.audits.clear();
    try {
      for (let i = 0; i < calls.length; i += 500) {
        await this.db
          .insertInto("call_log")
          .values(
            calls.slice(i, i + 500).map((e) => ({
              id: randomUUID(),
              owner_id: e.ownerId,
              key_id: e.keyId,
              at: e.at,
              method: e.method,
              path: e.path,
              status: e.status,
              error_code: e.errorCode,
              request_id: e.requestId,
            })),
          )
          .execute();
      }
      for (let i = 0; i < audits.length; i += 500) {
        await this.db
          .insertInto("audit_log")
          .values(
            audits.slice(i, i + 500).map((e) => ({
              id: randomUUID(),
              owner_id: e.ownerId,
              at: e.at,
              event: e.event,
              key_id: e.keyId,
              detail: e.detail,
            })),
          )
          .execute();
      }
    } catch (err) {
      putBack(this.calls, calls);
      putBack(this.audits, audits);
      throw err;
    }
    for (const owner of new Set(calls.map((e) => e.ownerId))) await this.trim("call_log", owner, CALL_LOG_LIMIT);
    for (const owner of new Set(audits.map((e) => e.ownerId))) await this.trim("audit_log", owner, AUDIT_LOG_LIMIT);
  }

  /** Keeps an account's newest `limit` entries of `table`. */
  private async trim(table: "call_log" | "audit_log", ownerId: string, limit: number) {
    await sql`delete from ${sql.table(table)} where owner_id = ${ownerId} and at < (
      select at from ${sql.table(table)} where owner_id = ${ownerId} order by at desc limit 1 offset ${limit - 1})`.execute(
      this.db,
    );
  }

  /** An account's calls, newest first, filtered by key and status. */
  async listCalls(ownerId: string, filter: CallFilter = {}, limit = 200): Promise<CallEntry[]> {
    await this.flush();
    let q = this.db.selectFrom("call_log").selectAll().where("owner_id", "=", ownerId);
    if (filter.keyId) q = q.where("key_id", "=", filter.keyId);
    const cls = /^([1-5])xx$/.exec(filter.status ?? "")?.[1];
    if (cls) q = q.where("status", ">=", Number(cls) * 100).where("status", "<", Number(cls) * 100 + 100);
    else if (/^\d{3}$/.test(filter.status ?? "")) q = q.where("status", "=", Number(filter.status));
    const rows = await q.orderBy("at", "desc").limit(limit).execute();
    return rows.map((r) => ({
      ownerId: r.owner_id,
      keyId: r.key_id,
      at: r.at,
      method: r.method,
      path: r.path,
      status: Number(r.status),
      errorCode: r.error_code,
      requestId: r.request_id,
    }));
  }

  /** An account's key events, newest first. */
  async listAudit(ownerId: string, limit = 200): Promise<AuditEntry[]> {
    await this.flush();
    const rows = await this.db
      .selectFrom("audit_log")
      .selectAll()
      .where("owner_id", "=", ownerId)
      .orderBy("at", "desc")
      .limit(limit)
      .execute();
    return rows.map((r) => ({
      ownerId: r.owner_id,
      at: r.at,
      event: r.event as AuditEvent,
      keyId: r.key_id,
      detail: r.detail,
    }));
  }
}

/**
 * The newest `limit` entries of each owner, in order: a busy account's older ones would be
 * trimmed right after they were written, so they are not written at all.
 */
function newestPerOwner(entries: CallEntry[], limit: number): CallEntry[] {
  if (entries.length <= limit) return entries;
  const seen = new Map<string, number>();
  const kept: CallEntry[] = [];
  for (let i = entries.length - 1; i >= 0; i--) {
    const e = entries[i] as CallEntry;
    const n = seen.get(e.ownerId) ?? 0;
    if (n >= limit) continue;
    seen.set(e.ownerId, n + 1);
    kept.push(e);
  }
  return kept.reverse();
}

/** Appends `e`, dropping the oldest entry when MAX_PENDING are pending. */
function pushBounded<T>(queue: Denque<T>, e: T): void {
  if (queue.length >= MAX_PENDING) queue.shift();
  queue.push(e);
}

/** Puts entries that failed to write back before those recorded since, as long as there is room (the oldest go). */
function putBack<T>(queue: Denque<T>, entries: T[]): void {
  for (let i = entries.length - 1; i >= 0 && queue.length < MAX_PENDING; i--) queue.unshift(entries[i] as T);
}

/** The logs' rows for the expired-rows sweep (db/expired-rows.ts). */
export const ACTIVITY_EXPIRIES = [
  { name: "call_log", table: "call_log", column: "at", keepMs: CALL_LOG_KEEP_MS },
  { name: "audit_log", table: "audit_log", column: "at", keepMs: AUDIT_LOG_KEEP_MS },
];
