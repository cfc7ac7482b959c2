import { sql } from "kysely";
import type { Logger } from "pino";
import { Periodic } from "../lib/periodic.js";
import type { Database } from "./database.js";

/** How often an instance deletes expired rows. */
const INTERVAL_MS = 15 * 60_000;

/**
 * Rows of `table` that are dead once `column` (a time: ISO 8601 text on SQLite, text or
 * timestamptz on PostgreSQL) lies more than `keepMs` before now; `name` keys the counts a pass
 * returns.
 */
export interface Expiry {
  name: string;
  table: string;
  column: string;
  keepMs: number;
}

/** A table made on first use (better-auth's) may not exist yet: then there is nothing to sweep. */
function noTableYet(err: unknown): boolean {
  const e = err as { code?: unknown; message?: unknown };
  return e.code === "42P01" || (typeof e.message === "string" && e.message.includes("no such table"));
}

/**
 * Deletes rows nothing will read again, which their owners delete only when they meet them (or
 * never): one `DELETE … WHERE column < cutoff` per table. Every instance runs it: instances passing
 * at once delete each row once and the others find nothing, and a row still live is never touched.
 */
export class ExpiredRowsSweep {
  private readonly periodic: Periodic;

  constructor(
    private readonly database: Database,
    logger: Logger,
    private readonly now: () => Date,
    private readonly expiries: readonly Expiry[],
  ) {
    this.periodic = new Periodic("expired rows sweep", () => this.runOnce(), logger);
  }

  /** Rows deleted, by `Expiry.name`. */
  async runOnce(): Promise<Record<string, number>> {
    const deleted: Record<string, number> = {};
    for (const e of this.expiries) deleted[e.name] = await this.expire(e);
    return deleted;
  }

  private async expire(e: Expiry): Promise<number> {
    // One ISO string compares right with ISO text (SQLite, and text columns on PostgreSQL) and
    // with timestamptz (PostgreSQL casts it).
    const cutoff = new Date(this.now().getTime() - e.keepMs).toISOString();
    try {
      const res = await sql`delete from ${sql.table(e.table)} where ${sql.ref(e.column)} < ${cutoff}`.execute(
        this.database.db,
      );
      return Number(res.numAffectedRows ?? 0);
    } catch (err) {
      if (noTableYet(err)) return 0;
      throw err;
    }
  }

  start(intervalMs = INTERVAL_MS): void {
    this.periodic.start(intervalMs);
  }

  stop(): Promise<void> {
    return this.periodic.stop();
  }
}
