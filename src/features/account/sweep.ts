import { sql } from "kysely";
import type { Logger } from "pino";
import type { Database } from "../../db/database.js";
import { Periodic } from "../../lib/periodic.js";

/** How often an instance deletes expired sign-in rows. */
const INTERVAL_MS = 15 * 60_000;

export interface AuthSweepRun {
  /** OAuth states and e-mail codes (auth_verification) past their expiry. */
  verifications: number;
  /** Sessions (auth_session) past their expiry. */
  sessions: number;
}

/** better-auth's tables are made on the first account request: until then there is nothing to sweep. */
function noTableYet(err: unknown): boolean {
  const e = err as { code?: unknown; message?: unknown };
  return e.code === "42P01" || (typeof e.message === "string" && e.message.includes("no such table"));
}

/**
 * Deletes the sign-in rows better-auth leaves behind once they have expired: the OAuth state of a
 * sign-in or link the browser never came back from (10 minutes), e-mail codes never tried (10
 * minutes), and sessions never presented again after their 7 days. better-auth deletes such a row
 * only when it meets it (a state or code when its callback or check arrives, a session when its
 * cookie does), and its own clean-up of expired states rides on the next OAuth callback's
 * request (turned off: `verification.disableCleanup`). One `DELETE … WHERE "expiresAt" < now` per
 * table: instances passing at once delete each row once and the others find nothing, and a row
 * not yet expired is never touched, so a sign-in in progress is unaffected.
 */
export class AuthSweep {
  private readonly periodic: Periodic;

  constructor(
    private readonly database: Database,
    logger: Logger,
    private readonly now: () => Date = () => new Date(),
  ) {
    this.periodic = new Periodic("expired sign-in rows sweep", () => this.runOnce(), logger);
  }

  async runOnce(): Promise<AuthSweepRun> {
    // SQLite holds better-auth's dates as ISO 8601 text, PostgreSQL as timestamptz: one ISO
    // string compares right on both.
    const now = this.now().toISOString();
    return {
      verifications: await this.expire("auth_verification", now),
      sessions: await this.expire("auth_session", now),
    };
  }

  private async expire(table: "auth_verification" | "auth_session", now: string): Promise<number> {
    try {
      const res = await sql`delete from ${sql.table(table)} where "expiresAt" < ${now}`.execute(this.database.db);
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

export function createAuthSweep(deps: { database: Database; logger: Logger; now: () => Date }): AuthSweep {
  return new AuthSweep(deps.database, deps.logger, deps.now);
}
