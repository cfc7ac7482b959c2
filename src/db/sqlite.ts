import { createRequire } from "node:module";
import type BetterSqlite3 from "better-sqlite3";

/** An open better-sqlite3 database (the same API in 12 and 13 for everything Almanac uses). */
export type SqliteConnection = BetterSqlite3.Database;
// biome-ignore lint/complexity/noBannedTypes: better-sqlite3's own bound for named parameters
export type SqliteStatement<P extends unknown[] | {} = unknown[], R = unknown> = BetterSqlite3.Statement<P, R>;
export type SqliteOptions = BetterSqlite3.Options;

/**
 * Which better-sqlite3 this process loads; every SQLite file Almanac opens goes through here.
 *
 * better-sqlite3 13 is a Node-API 10 addon (Node 22.14 and later): under an older Node it
 * crashes at the first `new Database` (a segfault on Node 20, which has Node-API 9). 12 builds
 * against Node's own headers and wraps its objects in `node::ObjectWrap`, whose destructor on
 * Node 24.19+ asserts that a JavaScript context is entered: a prepared statement freed by a
 * garbage collection run off an idle task aborts the process (`Assertion failed: (env) !=
 * nullptr` in `Statement::~Statement`). So 13 (installed as the `better-sqlite3-napi` alias)
 * where Node-API 10 exists, 12 otherwise. When Node 20 support ends, drop 12 and this choice.
 */
export function sqliteDriverFor(napiVersion: number): "better-sqlite3" | "better-sqlite3-napi" {
  return napiVersion >= 10 ? "better-sqlite3-napi" : "better-sqlite3";
}

const driverName = sqliteDriverFor(Number(process.versions.napi));
type Driver = typeof BetterSqlite3;
let driver: Driver | undefined;

/** Only the chosen package is loaded (13's JavaScript is harmless on Node 20, its addon is not). */
function load(): Driver {
  driver ??= createRequire(import.meta.url)(driverName) as Driver;
  return driver;
}

/** Opens (or creates) a SQLite database file, or `:memory:`, with the driver for this Node. */
export function openSqliteFile(file: string, options?: SqliteOptions): SqliteConnection {
  const Database = load();
  return new Database(file, options);
}

/** The chosen package's entry file, for a worker thread to load the same driver. */
export function sqliteDriverPath(): string {
  return createRequire(import.meta.url).resolve(driverName);
}

/** For logs and the bench: e.g. "better-sqlite3 13.2.0 (Node-API)". */
export function sqliteDriverLabel(): string {
  const { version } = createRequire(import.meta.url)(`${driverName}/package.json`) as { version: string };
  return `better-sqlite3 ${version}${driverName === "better-sqlite3-napi" ? " (Node-API)" : ""}`;
}
