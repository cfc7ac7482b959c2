import { chmodSync, closeSync, mkdirSync, openSync } from "node:fs";
import { join } from "node:path";
import {
  CompiledQuery,
  type DatabaseConnection,
  type Driver,
  Kysely,
  type SqliteDatabase,
  SqliteDialect,
  type SqliteDialectConfig,
  SqliteDriver,
  sql,
} from "kysely";
import { LRUCache } from "lru-cache";
import type pg from "pg";
import type { Logger } from "pino";
import type { Config } from "../config.js";
import { AlmanacPostgresDialect } from "./migrations.js";
import { openPostgresPool, type PostgresPoolOptions } from "./postgres-pool.js";
import type { DB } from "./schema.js";
import { openSqliteFile, type SqliteConnection, type SqliteStatement } from "./sqlite.js";

export type Dialect = "sqlite" | "postgres";

/** The project's database: Kysely over embedded SQLite (default) or PostgreSQL. */
export interface Database {
  /** For requests: on PostgreSQL, bounded by the pool settings (see postgres-pool.ts). */
  readonly db: Kysely<DB>;
  /** The same database without those bounds, for migrations (lock waits, long DDL). */
  readonly schema: Kysely<DB>;
  readonly dialect: Dialect;
  /** The underlying driver object, for libraries that take it directly (better-auth). */
  readonly raw: SqliteConnection | pg.Pool;
  ping(): Promise<boolean>;
  close(): Promise<void>;
}

export type PoolSettings = Omit<PostgresPoolOptions, "url">;

export interface DatabaseOptions {
  dataDir: string;
  databaseUrl?: string;
  logger: Logger;
  /** How PostgreSQL is pooled and bounded for requests (`poolSettings(config)`); unset: unbounded (the CLI). */
  pool?: PoolSettings;
}

/** The DATABASE_* pool settings of `config`. */
export const poolSettings = (config: Config): PoolSettings => ({
  size: config.DATABASE_POOL_SIZE,
  acquireTimeoutMs: config.DATABASE_ACQUIRE_TIMEOUT_MS,
  silenceMs: config.DATABASE_TIMEOUT_MS,
});

export function openDatabase(opts: DatabaseOptions): Database {
  return opts.databaseUrl ? openPostgres(opts.databaseUrl, opts.logger, opts.pool) : openSqlite(opts.dataDir);
}

/**
 * The data directory (0700 when we create it) and a database file in it, owner-only (0600):
 * SQLite creates its -wal and -shm files with the database file's mode, so they are 0600 too.
 */
export function privateDatabaseFile(dataDir: string, name = "almanac.db"): string {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const file = join(dataDir, name);
  closeSync(openSync(file, "a", 0o600));
  chmodSync(file, 0o600);
  return file;
}

/**
 * Kysely's SQLite driver prepares every query afresh; better-sqlite3 statements are reusable, so
 * they are kept per SQL text (our queries are a bounded set of shapes; the LRU bounds the rest).
 * A statement still iterating (a streamed query) is not shared: that call gets its own.
 */
function preparedOnce(raw: SqliteConnection): SqliteDatabase {
  const statements = new LRUCache<string, SqliteStatement>({ max: 500 });
  return {
    close: () => raw.close(),
    prepare: (sql: string) => {
      let stmt = statements.get(sql);
      if (stmt === undefined || stmt.busy) {
        stmt = raw.prepare(sql);
        statements.set(sql, stmt);
      }
      return stmt;
    },
  };
}

/**
 * Transactions begin IMMEDIATE: they take the write lock first, waiting up to busy_timeout for it.
 * A deferred one (Kysely's `begin`) reads, then finds at its first write that another process
 * (WEB_CONCURRENCY, the CLI) committed since: SQLITE_BUSY_SNAPSHOT at once, no wait, a 500.
 */
class ImmediateTransactionDialect extends SqliteDialect {
  readonly #config: SqliteDialectConfig;
  constructor(config: SqliteDialectConfig) {
    super(config);
    this.#config = config;
  }
  override createDriver(): Driver {
    return new (class extends SqliteDriver {
      override async beginTransaction(connection: DatabaseConnection): Promise<void> {
        await connection.executeQuery(CompiledQuery.raw("begin immediate"));
      }
    })(this.#config);
  }
}

function openSqlite(dataDir: string): Database {
  const file = privateDatabaseFile(dataDir);
  const raw = openSqliteFile(file);
  raw.pragma("journal_mode = WAL");
  // FULL: a commit is fsynced before it is acknowledged, so nothing acknowledged is lost
  // even on power failure (NORMAL in WAL mode only survives a process crash).
  raw.pragma("synchronous = FULL");
  // The CLI opens the same file while the server runs: wait for the lock instead of failing.
  raw.pragma("busy_timeout = 5000");
  raw.pragma("foreign_keys = ON");
  const db = new Kysely<DB>({ dialect: new ImmediateTransactionDialect({ database: preparedOnce(raw) }) });
  return {
    db,
    schema: db,
    dialect: "sqlite",
    raw,
    ping: () => ping(db),
    close: () => db.destroy(),
  };
}

/** Without pool settings (the CLI): the pool's defaults, and no bound on waiting. */
const UNBOUNDED: PoolSettings = { size: 10, acquireTimeoutMs: 0, silenceMs: 0 };

function openPostgres(url: string, logger: Logger, settings?: PoolSettings): Database {
  const { raw, bounded, unbounded } = openPostgresPool({ url, ...(settings ?? UNBOUNDED) });
  raw.on("error", (err) => logger.warn({ err: err.message }, "postgres pool error"));
  // A checked-out client whose server goes away emits "error" with no listener (the pool only
  // listens to idle ones): an uncaught exception that would end the process. Its query fails anyway.
  raw.on("connect", (client) => {
    client.on("error", (err) => logger.warn({ err: err.message }, "postgres connection lost"));
  });
  const db = new Kysely<DB>({ dialect: new AlmanacPostgresDialect({ pool: settings ? bounded : unbounded }) });
  const schema = settings ? new Kysely<DB>({ dialect: new AlmanacPostgresDialect({ pool: unbounded }) }) : db;
  return {
    db,
    schema,
    dialect: "postgres",
    raw,
    ping: () => ping(db),
    // Both Kysely instances end the one pool: end it once.
    close: () => db.destroy(),
  };
}

async function ping(db: Kysely<DB>): Promise<boolean> {
  try {
    await sql`select 1`.execute(db);
    return true;
  } catch {
    return false;
  }
}
