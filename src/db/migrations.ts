import {
  type Kysely,
  type Migration,
  type MigrationProvider,
  Migrator,
  PostgresAdapter,
  PostgresDialect,
  sql,
} from "kysely";
import { mailboxPool } from "../lib/mailbox.js";

/**
 * Every migration, in order. One set for both dialects: only portable column types
 * (text, integer, bigint) and no dialect-specific defaults.
 */
const migrations: Record<string, Migration> = {
  "001_foundation": {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable("almanac_meta")
        .addColumn("key", "text", (c) => c.primaryKey())
        .addColumn("value", "text", (c) => c.notNull())
        .addColumn("updated_at", "text", (c) => c.notNull())
        .execute();
      await db.schema
        .createTable("idempotency")
        .addColumn("scope", "text", (c) => c.notNull())
        .addColumn("key", "text", (c) => c.notNull())
        .addColumn("body_hash", "text", (c) => c.notNull())
        .addColumn("status", "integer", (c) => c.notNull())
        .addColumn("response", "text")
        .addColumn("created_at", "text", (c) => c.notNull())
        .addPrimaryKeyConstraint("idempotency_pk", ["scope", "key"])
        .execute();
    },
  },
  "002_api_keys": {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable("api_keys")
        .addColumn("id", "text", (c) => c.primaryKey())
        .addColumn("key_hash", "text", (c) => c.notNull().unique())
        .addColumn("start", "text", (c) => c.notNull())
        .addColumn("last4", "text", (c) => c.notNull())
        .addColumn("name", "text", (c) => c.notNull())
        .addColumn("owner_id", "text")
        .addColumn("permissions", "text", (c) => c.notNull())
        .addColumn("expires_at", "text")
        .addColumn("remaining", "integer")
        .addColumn("ratelimit_limit", "integer")
        .addColumn("ratelimit_duration_sec", "integer")
        .addColumn("revoked_at", "text")
        .addColumn("last_used_at", "text")
        .addColumn("created_at", "text", (c) => c.notNull())
        .execute();
      await db.schema.createIndex("api_keys_owner_idx").on("api_keys").column("owner_id").execute();
    },
  },
  "003_contact_messages": {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable("contact_messages")
        .addColumn("id", "text", (c) => c.primaryKey())
        .addColumn("name", "text", (c) => c.notNull())
        .addColumn("email", "text", (c) => c.notNull())
        .addColumn("subject", "text")
        .addColumn("message", "text", (c) => c.notNull())
        .addColumn("client_ip", "text")
        .addColumn("idempotency_key", "text")
        .addColumn("status", "text", (c) => c.notNull())
        .addColumn("attempts", "integer", (c) => c.notNull())
        .addColumn("last_error", "text")
        .addColumn("message_id", "text")
        .addColumn("created_at", "text", (c) => c.notNull())
        .addColumn("updated_at", "text", (c) => c.notNull())
        .addColumn("sent_at", "text")
        .execute();
      await db.schema.createIndex("contact_messages_status_idx").on("contact_messages").column("status").execute();
      await db.schema
        .createIndex("contact_messages_idem_idx")
        .on("contact_messages")
        .column("idempotency_key")
        .execute();
    },
  },
  // A claim's holder and lease (db/idempotency.ts): a cut request no longer locks its key for 24 h.
  "021_idempotency_lease": {
    async up(db: Kysely<unknown>) {
      await db.schema.alterTable("idempotency").addColumn("owner", "text").execute();
      await db.schema.alterTable("idempotency").addColumn("lease_until", "text").execute();
    },
  },
  // keys: plans, the account key ledger (caps, names, rolls) and per-key usage counts.
  "012_keys_plans_usage": {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable("account_plans")
        .addColumn("email", "text", (c) => c.primaryKey())
        .addColumn("plan", "text", (c) => c.notNull())
        .addColumn("source", "text", (c) => c.notNull())
        .addColumn("reference", "text")
        .addColumn("updated_at", "text", (c) => c.notNull())
        .execute();
      await db.schema
        .createTable("key_owners")
        .addColumn("owner_id", "text", (c) => c.primaryKey())
        .addColumn("touched_at", "text", (c) => c.notNull())
        .execute();
      await db.schema
        .createTable("key_ledger")
        .addColumn("id", "text", (c) => c.primaryKey())
        .addColumn("key_id", "text")
        .addColumn("owner_id", "text", (c) => c.notNull())
        .addColumn("name", "text", (c) => c.notNull())
        .addColumn("plan", "text", (c) => c.notNull())
        .addColumn("created_at", "text", (c) => c.notNull())
        .addColumn("expires_at", "text")
        .addColumn("revoked_at", "text")
        .addColumn("rolled_at", "text")
        .execute();
      await db.schema.createIndex("key_ledger_owner_idx").on("key_ledger").column("owner_id").execute();
      await db.schema.createIndex("key_ledger_key_idx").on("key_ledger").column("key_id").execute();
      await db.schema
        .createTable("key_usage")
        .addColumn("key_id", "text", (c) => c.notNull())
        .addColumn("hour", "text", (c) => c.notNull())
        .addColumn("count", "integer", (c) => c.notNull())
        .addPrimaryKeyConstraint("key_usage_pk", ["key_id", "hour"])
        .execute();
      await db.schema.createIndex("key_usage_hour_idx").on("key_usage").column("hour").execute();
      await db.schema
        .createTable("billing_events")
        .addColumn("id", "text", (c) => c.primaryKey())
        .addColumn("type", "text", (c) => c.notNull())
        .addColumn("received_at", "text", (c) => c.notNull())
        .execute();
      // Keys made on the account page before plans existed count against the caps too.
      await sql`insert into key_ledger (id, key_id, owner_id, name, plan, created_at, expires_at, revoked_at)
        select id, id, owner_id, name, 'free', created_at, expires_at, revoked_at from api_keys
        where owner_id is not null`.execute(db);
    },
  },
  // keys: rolls share one quota (api_keys.quota_of), link old → new, and run once per key; the
  // account's quota and rate limit are the account's (account_quotas), not each key's.
  // keys: refused calls per key and hour beside the charged ones (the account chart).
  "024_key_usage_refused": {
    async up(db: Kysely<unknown>) {
      await db.schema
        .alterTable("key_usage")
        .addColumn("refused", "integer", (c) => c.notNull().defaultTo(0))
        .execute();
    },
  },
  // keys: one reminder a week before a key expires, claimed by inserting its (key, expiry) row.
  "025_key_expiry_reminders": {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable("key_expiry_reminders")
        .addColumn("key_id", "text", (c) => c.notNull())
        .addColumn("expires_at", "text", (c) => c.notNull())
        .addColumn("claimed_at", "text", (c) => c.notNull())
        .addPrimaryKeyConstraint("key_expiry_reminders_pk", ["key_id", "expires_at"])
        .execute();
    },
  },
  // contact: an Idempotency-Key is the client's (the network its hourly limit counts by), not
  // the whole desk's. Older rows keep NULL; the desk tells their client from client_ip.
  "026_contact_client_key": {
    async up(db: Kysely<unknown>) {
      await db.schema.alterTable("contact_messages").addColumn("client_key", "text").execute();
    },
  },
  // billing: when Stripe made the purchase in force (its event's `created`), so that an older
  // purchase delivered late (Stripe retries for days, in any order) does not replace it.
  "027_plan_purchased_at": {
    async up(db: Kysely<unknown>) {
      await db.schema.alterTable("account_plans").addColumn("purchased_at", "text").execute();
    },
  },
  // The expired-rows sweep (db/expired-rows.ts) deletes claims by age: without an index each pass
  // would read the whole table.
  "028_idempotency_created_at": {
    async up(db: Kysely<unknown>) {
      await db.schema.createIndex("idempotency_created_at").on("idempotency").column("created_at").execute();
    },
  },
  // keys: when a key's uses were last set, so a refund of a call charged before does not go on
  // top of the new count.
  "029_keys_uses_set_at": {
    async up(db: Kysely<unknown>) {
      await db.schema.alterTable("api_keys").addColumn("uses_set_at", "text").execute();
    },
  },
  // billing: one Stripe subscription per account, as its signed events left it (features/billing).
  "030_billing_subscriptions": {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable("billing_subscriptions")
        .addColumn("account_id", "text", (c) => c.primaryKey())
        .addColumn("email", "text", (c) => c.notNull())
        .addColumn("customer_id", "text")
        .addColumn("subscription_id", "text")
        .addColumn("plan", "text", (c) => c.notNull())
        .addColumn("status", "text", (c) => c.notNull())
        .addColumn("period_start", "text")
        .addColumn("period_end", "text")
        .addColumn("cancel_at_period_end", "integer", (c) => c.notNull().defaultTo(0))
        .addColumn("next_plan", "text")
        .addColumn("payment_failed_at", "text")
        .addColumn("last_payment_amount", "integer")
        .addColumn("last_payment_currency", "text")
        .addColumn("last_payment_at", "text")
        .addColumn("checkout_session", "text")
        .addColumn("state_at", "integer", (c) => c.notNull().defaultTo(0))
        .addColumn("updated_at", "text", (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex("billing_subscriptions_customer")
        .on("billing_subscriptions")
        .column("customer_id")
        .execute();
    },
  },
  // keys: an account's uses belong to a period; free refills itself each calendar month (UTC).
  "031_account_quota_periods": {
    async up(db: Kysely<unknown>) {
      for (const column of ["period_start", "period_end", "refill_at"]) {
        await db.schema.alterTable("account_quotas").addColumn(column, "text").execute();
      }
      // Free accounts: this month is their first period; paid ones get theirs from Stripe.
      const now = new Date();
      const start = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1)).toISOString();
      const next = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1)).toISOString();
      await sql`update account_quotas set period_start = ${start}, period_end = ${next}, refill_at = ${next}
        where owner_id in (select owner_id from key_ledger where plan = 'free')`.execute(db);
    },
  },
  // keys: the last calls of each account's keys and the audit log of its key events.
  "032_call_and_audit_log": {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable("call_log")
        .addColumn("id", "text", (c) => c.primaryKey())
        .addColumn("owner_id", "text", (c) => c.notNull())
        .addColumn("key_id", "text", (c) => c.notNull())
        .addColumn("at", "text", (c) => c.notNull())
        .addColumn("method", "text", (c) => c.notNull())
        .addColumn("path", "text", (c) => c.notNull())
        .addColumn("status", "integer", (c) => c.notNull())
        .addColumn("error_code", "text")
        .addColumn("request_id", "text", (c) => c.notNull())
        .execute();
      await db.schema.createIndex("call_log_owner_at").on("call_log").columns(["owner_id", "at"]).execute();
      await db.schema.createIndex("call_log_at").on("call_log").column("at").execute();
      await db.schema
        .createTable("audit_log")
        .addColumn("id", "text", (c) => c.primaryKey())
        .addColumn("owner_id", "text", (c) => c.notNull())
        .addColumn("at", "text", (c) => c.notNull())
        .addColumn("event", "text", (c) => c.notNull())
        .addColumn("key_id", "text")
        .addColumn("detail", "text")
        .execute();
      await db.schema.createIndex("audit_log_owner_at").on("audit_log").columns(["owner_id", "at"]).execute();
      await db.schema.createIndex("audit_log_at").on("audit_log").column("at").execute();
    },
  },
  // keys: the free allowance is one per mailbox; each ledger row names the pool its key spends.
  "033_key_ledger_pool": {
    async up(db: Kysely<unknown>) {
      await db.schema
        .alterTable("key_ledger")
        .addColumn("pool", "text", (c) => c.notNull().defaultTo(""))
        .execute();
      await sql`update key_ledger set pool = owner_id`.execute(db);
      await poolFreeAccountsByMailbox(db);
    },
  },
  // idempotency: whether the claim's holder was charged for its key's call, so a request that
  // takes over a claim whose holder was cut pays exactly when the holder did not.
  "034_idempotency_charged": {
    async up(db: Kysely<unknown>) {
      await db.schema
        .alterTable("idempotency")
        .addColumn("charged", "integer", (c) => c.notNull().defaultTo(0))
        .execute();
    },
  },
  "019_keys_account_quota": {
    async up(db: Kysely<unknown>) {
      for (const column of ["replaces", "quota_of", "rolled_at"]) {
        await db.schema.alterTable("api_keys").addColumn(column, "text").execute();
      }
      await db.schema.alterTable("key_ledger").addColumn("revoked_reason", "text").execute();
      await db.schema
        .createTable("account_quotas")
        .addColumn("owner_id", "text", (c) => c.primaryKey())
        .addColumn("remaining", "integer")
        .addColumn("updated_at", "text", (c) => c.notNull())
        .execute();
      // Account-page keys drew on limits of their own; from now on they draw on their account's.
      await sql`update api_keys set remaining = null, ratelimit_limit = null, ratelimit_duration_sec = null
        where id in (select key_id from key_ledger where key_id is not null)`.execute(db);
    },
  },
};

/**
 * Free accounts spend their mailbox's allowance: their ledger rows name it, and each mailbox's
 * pool starts with the fewest uses any of its accounts had left (so no one gains by the move).
 */
async function poolFreeAccountsByMailbox(db: Kysely<unknown>): Promise<void> {
  const schema = await currentSchema(db);
  const tables = await db.introspection.getTables();
  // No one has signed in on this database (PostgreSQL: in this schema) yet.
  if (!tables.some((t) => t.name === "auth_user" && (schema === undefined || t.schema === schema))) return;
  const { rows } = await sql<{ owner_id: string; email: string }>`select distinct l.owner_id, u.email
    from key_ledger l join auth_user u on u.id = l.owner_id where l.plan = 'free'`.execute(db);
  const pools = new Map<string, string[]>();
  for (const r of rows) {
    const pool = mailboxPool(r.email);
    await sql`update key_ledger set pool = ${pool} where owner_id = ${r.owner_id} and plan = 'free'`.execute(db);
    pools.set(pool, [...(pools.get(pool) ?? []), r.owner_id]);
  }
  for (const [pool, owners] of pools) {
    await sql`insert into account_quotas (owner_id, remaining, updated_at, period_start, period_end, refill_at)
      select ${pool}, remaining, updated_at, period_start, period_end, refill_at from account_quotas
      where owner_id in (${sql.join(owners)}) and remaining is not null
      order by remaining limit 1`.execute(db);
  }
}

class InCodeProvider implements MigrationProvider {
  async getMigrations(): Promise<Record<string, Migration>> {
    return migrations;
  }
}

/**
 * PostgreSQL's schema for Kysely's own tables: the first one on `search_path`. Left unset,
 * Kysely takes its tables in ANY schema of the database as its own and then fails with
 * "relation kysely_migration_lock does not exist" in a fresh schema.
 */
// biome-ignore lint/suspicious/noExplicitAny: migrations run on any schema
async function currentSchema(db: Kysely<any>): Promise<string | undefined> {
  if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return undefined;
  const { rows } = await sql<{ schema: string | null }>`select current_schema() as schema`.execute(db);
  return rows[0]?.schema ?? undefined;
}

/**
 * Kysely's own lock key for migrations (so an instance of an older build, which takes it for its
 * session, and this one exclude each other), taken by `migrate` for its transaction only.
 */
export const MIGRATION_LOCK = 3853314791062309107n;

/** Kysely's PostgreSQL adapter without its session-level migration lock: `migrate` holds a transaction-level one. */
class TransactionLockedAdapter extends PostgresAdapter {
  override async acquireMigrationLock(): Promise<void> {}
  override async releaseMigrationLock(): Promise<void> {}
}

/** Kysely's PostgreSQL dialect, with migrations locked by `migrate` within their transaction. */
export class AlmanacPostgresDialect extends PostgresDialect {
  override createAdapter(): PostgresAdapter {
    return new TransactionLockedAdapter();
  }
}

/**
 * Applies pending migrations; safe to run from several instances at once. On PostgreSQL the whole
 * run is one transaction on one connection that first takes a transaction-level advisory lock
 * (`pg_advisory_xact_lock`): the next instance waits for the commit, then finds nothing to do.
 * Nothing outlives the transaction (no session lock: see AlmanacPostgresDialect), so a pooler in
 * transaction mode, which may give every transaction another server connection, runs it as well
 * as a direct connection.
 */
// biome-ignore lint/suspicious/noExplicitAny: migrations run on any schema
export async function migrate(db: Kysely<any>): Promise<string[]> {
  const schema = await currentSchema(db);
  if (schema === undefined) return migrateOn(db, schema, false);
  return db.connection().execute(async (conn) => {
    await sql`begin`.execute(conn);
    try {
      await sql`select pg_advisory_xact_lock(${MIGRATION_LOCK})`.execute(conn);
      const applied = await migrateOn(conn, schema, true);
      await sql`commit`.execute(conn);
      return applied;
    } catch (err) {
      await sql`rollback`.execute(conn).catch(() => undefined);
      throw err;
    }
  });
}

// biome-ignore lint/suspicious/noExplicitAny: migrations run on any schema
async function migrateOn(db: Kysely<any>, schema: string | undefined, inTransaction: boolean): Promise<string[]> {
  // Unordered: slices developed side by side may land a lower-numbered migration after a
  // higher one was applied; each migration is independent, so applying it late is safe.
  const migrator = new Migrator({
    db,
    provider: new InCodeProvider(),
    allowUnorderedMigrations: true,
    migrationTableSchema: schema,
    disableTransactions: inTransaction,
  });
  const { error, results } = await migrator.migrateToLatest();
  if (error) throw error;
  return (results ?? []).filter((r) => r.status === "Success").map((r) => r.migrationName);
}
