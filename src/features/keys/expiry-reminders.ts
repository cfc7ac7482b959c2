import { sql } from "kysely";
import type { Logger } from "pino";
import type { Config } from "../../config.js";
import type { Database } from "../../db/database.js";
import { Periodic } from "../../lib/periodic.js";
import type { MailLane } from "../../ports/mail-lane.js";

const WEEK_MS = 7 * 86_400_000;
/** How often an instance looks for keys that expire within a week. */
const INTERVAL_MS = 15 * 60_000;

export interface ReminderRun {
  /** Account keys that expire within a week and had no reminder for that expiry. */
  due: number;
  sent: number;
  failed: number;
  /** Claimed first by another instance. */
  skipped: number;
}

/**
 * A mail to a key's owner a week before the key expires, once per key and expiry (an edited
 * expiry earns a new one). Each instance looks every 15 minutes; a reminder is claimed first by
 * inserting its (key, expiry) row, so of several instances passing at once exactly one sends. A
 * send the mail lane refuses gives its claim back for the next pass; a crash between claim and
 * send loses that reminder (at most once, never twice).
 */
export class ExpiryReminders {
  private readonly periodic: Periodic;

  constructor(
    private readonly database: Database,
    private readonly lane: () => MailLane | undefined,
    private readonly publicUrl: string,
    private readonly logger: Logger,
    private readonly now: () => Date = () => new Date(),
  ) {
    this.periodic = new Periodic("key expiry reminders pass", () => this.runOnce(), logger);
  }

  async runOnce(): Promise<ReminderRun> {
    const run: ReminderRun = { due: 0, sent: 0, failed: 0, skipped: 0 };
    const lane = this.lane();
    if (!lane) return run;
    const db = this.database.db;
    const now = this.now();
    const from = now.toISOString();
    const until = new Date(now.getTime() + WEEK_MS).toISOString();
    const { rows } = await sql<{ key_id: string; name: string; expires_at: string; email: string }>`
      select l.key_id, l.name, l.expires_at, u.email from key_ledger l join auth_user u on u.id = l.owner_id
      where l.key_id is not null and l.revoked_at is null and l.rolled_at is null
        and l.expires_at > ${from} and l.expires_at <= ${until}
        and not exists (select 1 from key_expiry_reminders r where r.key_id = l.key_id and r.expires_at = l.expires_at)
      order by l.expires_at`.execute(db);
    for (const key of rows) {
      run.due++;
      const claimed = await db
        .insertInto("key_expiry_reminders")
        .values({ key_id: key.key_id, expires_at: key.expires_at, claimed_at: from })
        .onConflict((oc) => oc.columns(["key_id", "expires_at"]).doNothing())
        .returning("key_id")
        .executeTakeFirst();
      if (!claimed) {
        run.skipped++;
        continue;
      }
      const day = key.expires_at.slice(0, 10);
      const result = await lane.send({
        to: key.email,
        subject: `Your Almanac API key expires on ${day}`,
        text: [
          `Your Almanac API key "${key.name}" expires on ${day} at ${key.expires_at.slice(11, 16)} UTC.`,
          "After that it answers 401 and calls with it stop working.",
          "",
          `To keep it, give it a later expiry: ${this.publicUrl}/account/keys/${encodeURIComponent(key.key_id)}/edit`,
          `Your keys: ${this.publicUrl}/account`,
        ].join("\n"),
      });
      if (result.ok) {
        run.sent++;
        continue;
      }
      run.failed++;
      await db
        .deleteFrom("key_expiry_reminders")
        .where("key_id", "=", key.key_id)
        .where("expires_at", "=", key.expires_at)
        .execute();
      this.logger.warn(
        { key_id: key.key_id, reason: result.reason },
        "key expiry reminder not sent; next pass retries",
      );
    }
    if (run.due > 0) this.logger.info(run, "key expiry reminders pass");
    return run;
  }

  start(intervalMs = INTERVAL_MS): void {
    this.periodic.start(intervalMs);
  }

  stop(): Promise<void> {
    return this.periodic.stop();
  }
}

export function createExpiryReminders(deps: {
  config: Config;
  database: Database;
  mail?: MailLane;
  logger: Logger;
  now: () => Date;
}): ExpiryReminders {
  return new ExpiryReminders(deps.database, () => deps.mail, deps.config.PUBLIC_URL, deps.logger, deps.now);
}
