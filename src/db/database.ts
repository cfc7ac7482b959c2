import { chmodSync, closeSync, mkdirSync, openSync } from "node:fs";
import { join } from "node:path";
import SQLite from "better-sqlite3";
import { Kysely, PostgresDialect, type SqliteDatabase, SqliteDialect, sql } from "kysely";
import { LRUCache } from "lru-cache";
import pg from "pg";
import type { Logger } from "pino";
import type { DB } from "./schema.js";

export type Dialect = "sqlite" | "postgres";

/** The project's database: Kysely over embedded SQLite (default) or PostgreSQL. */
export interface Database {
  readonly db: Kysely<DB>;
  readonly dialect: Dialect;
  /** The underlying driver object, for libraries that take it directly (better-auth). */
  readonly raw: SQLite.Database | pg.Pool;
  ping(): Promise<boolean>;
  close(): Promise<void>;
}

export interface DatabaseOptions {
  dataDir: string;
  databaseUrl?: string;
  logger: Logger;
}

export function openDatabase(opts: DatabaseOptions): Database {
  return opts.databaseUrl ? openPostgres(opts.databaseUrl, opts.logger) : openSqlite(opts.dataDir);
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
function preparedOnce(raw: SQLite.Database): SqliteDatabase {
  const statements = new LRUCache<string, SQLite.Statement>({ max: 500 });
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

function openSqlite(dataDir: string): Database {
  const file = privateDatabaseFile(dataDir);
  const raw = new SQLite(file);
  raw.pragma("journal_mode = WAL");
  // FULL: a commit is fsynced before it is acknowledged, so nothing acknowledged is lost
  // even on power failure (NORMAL in WAL mode only survives a process crash).
  raw.pragma("synchronous = FULL");
  // The CLI opens the same file while the server runs: wait for the lock instead of failing.
  raw.pragma("busy_timeout = 5000");
  raw.pragma("foreign_keys = ON");
  const db = new Kysely<DB>({ dialect: new SqliteDialect({ database: preparedOnce(raw) }) });
  return {
    db,
    dialect: "sqlite",
    raw,
    ping: () => ping(db),
    close: () => db.destroy(),
  };
}

function openPostgres(url: string, logger: Logger): Database {
  const raw = new pg.Pool({
    connectionString: url,
    max: 10,
    // Fail fast when PostgreSQL is down: callers answer 503 within ~2 s instead of hanging.
    connectionTimeoutMillis: 1500,
    query_timeout: 5000,
    idleTimeoutMillis: 30_000,
  });
  raw.on("error", (err) => logger.warn({ err: err.message }, "postgres pool error"));
  // A checked-out client whose server goes away emits "error" with no listener (the pool only
  // listens to idle ones): an uncaught exception that would end the process. Its query fails anyway.
  raw.on("connect", (client) => {
    client.on("error", (err) => logger.warn({ err: err.message }, "postgres connection lost"));
  });
  const db = new Kysely<DB>({ dialect: new PostgresDialect({ pool: raw }) });
  return {
    db,
    dialect: "postgres",
    raw,
    ping: () => ping(db),
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
