// The admin composition: what the CLI and the cluster primary open, as buildDeps (deps.ts) does
// for the server. Nothing here serves HTTP.
import type { Logger } from "pino";
import { createKeyStore } from "./adapters/keys/factory.js";
import { MemoryRateLimiter } from "./adapters/memory-limiter.js";
import type { Config } from "./config.js";
import { type Database, openDatabase, type PoolSettings } from "./db/database.js";
import { migrate } from "./db/migrations.js";
import { AccountQuotas, ActivityLog, KeyService, UsageCounter } from "./features/keys/index.js";

export interface OpenMigratedOptions {
  /** Also create or update better-auth's tables (loads better-auth: over half a second). */
  auth?: boolean;
  /** PostgreSQL pool bounds (the server's); unset: unbounded, as the CLI wants. */
  pool?: PoolSettings;
}

/** Opens the configured database (SQLite in DATA_DIR, or DATABASE_URL) with every migration applied. */
export async function openMigrated(
  config: Config,
  logger: Logger,
  options: OpenMigratedOptions = {},
): Promise<{ database: Database; applied: string[] }> {
  const database = openDatabase({
    dataDir: config.DATA_DIR,
    databaseUrl: config.DATABASE_URL,
    logger,
    pool: options.pool,
  });
  try {
    const applied = await migrate(database.schema);
    if (options.auth) {
      const { migrateAuth } = await import("./features/account/auth.js"); // better-auth is heavy to load
      await migrateAuth({ config, database, logger });
    }
    return { database, applied };
  } catch (err) {
    await database.close().catch(() => undefined);
    throw err;
  }
}

/** What the admin commands (keys, plans) work with; close() releases it. */
export interface AdminDeps {
  config: Config;
  database: Database;
  /**
   * The key service over the store the server uses (embedded, or Unkey with UNKEY_ROOT_KEY): the
   * operator's operations, and the account-page rules (`accounts`: pairs, plans) as the server
   * applies them. It verifies nothing, so no rate limits apply here.
   */
  keys: KeyService;
  /** The clock the commands read (a key's expiry "in the past"). */
  now: () => Date;
  close(): Promise<void>;
}

export async function buildAdminDeps(config: Config, logger: Logger): Promise<AdminDeps> {
  const { database } = await openMigrated(config, logger);
  const usage = new UsageCounter(database.db);
  // Key events made here (revoke, roll, edit, plan grants) go to the accounts' audit log, as the server's do.
  const activity = new ActivityLog(database.db, {
    onError: (err) => logger.warn({ err: (err as Error).message }, "audit log not written"),
  });
  const now = () => new Date();
  const storage = createKeyStore(config, database, new MemoryRateLimiter(), new AccountQuotas(database.db, now));
  return {
    config,
    database,
    now,
    keys: new KeyService({
      storage,
      verifier: storage,
      db: database.db,
      usage,
      now,
      onEvent: (e) => activity.recordAudit(e),
    }),
    close: async () => {
      await usage.close().catch(() => undefined);
      await activity.close().catch(() => undefined);
      await database.close();
    },
  };
}
