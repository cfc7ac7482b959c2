import { sql } from "kysely";
import pino from "pino";
import { describe, expect, it } from "vitest";
import { parseConfig } from "../../src/config.js";
import { type Database, openDatabase } from "../../src/db/database.js";
import { migrate } from "../../src/db/migrations.js";
import { migrateAuth } from "../../src/features/account/auth.js";
import { DATABASE_URL, freshPostgresUrl, skipReason, tempDir } from "../helpers/env.js";

const logger = pino({ level: "silent" });
const AUTH_TABLES = ["auth_account", "auth_session", "auth_user", "auth_verification"];

/** better-auth's tables in the database's own schema: each name as often as it occurs, with its columns. */
async function authTables(database: Database): Promise<[string, string[]][]> {
  const schema =
    database.dialect === "postgres"
      ? (await sql<{ s: string }>`select current_schema() as s`.execute(database.db)).rows[0]?.s
      : undefined;
  const tables = await database.db.introspection.getTables();
  return tables
    .filter((t) => t.name.startsWith("auth_") && t.schema === schema)
    .map((t): [string, string[]] => [t.name, t.columns.map((c) => c.name).sort()])
    .sort(([a], [b]) => a.localeCompare(b));
}

/**
 * `n` instances on one empty database migrate at once (each its own connection); the tables they
 * leave, read through the first. Every instance must come up: migrateAuth resolves for each.
 */
async function startTogether(env: Record<string, string>, n: number) {
  const config = parseConfig({ LOG_LEVEL: "silent", ...env });
  const dbs = Array.from({ length: n }, () =>
    openDatabase({ dataDir: config.DATA_DIR, databaseUrl: config.DATABASE_URL, logger }),
  );
  const [first] = dbs as [Database, ...Database[]];
  try {
    await migrate(first.db);
    await Promise.all(dbs.map((database) => migrateAuth({ config, database, logger })));
    return await authTables(first);
  } finally {
    for (const d of dbs) await d.close();
  }
}

/** Each of better-auth's four tables exactly once, with exactly the columns one instance alone creates. */
async function expectCreatedOnce(env: () => Promise<Record<string, string>>) {
  const together = await startTogether(await env(), 3);
  const alone = await startTogether(await env(), 1);
  expect(together.map(([name]) => name)).toEqual(AUTH_TABLES);
  expect(together).toEqual(alone);
}

describe("better-auth tables", () => {
  it("are created once on SQLite even when instances start together", async () => {
    await expectCreatedOnce(async () => ({ DATA_DIR: tempDir() }));
  });

  it.skipIf(!DATABASE_URL)(
    `are created once on PostgreSQL even when instances start together ${skipReason({ postgres: true }) ?? ""}`,
    async () => {
      const schemas: { drop: () => Promise<void> }[] = [];
      try {
        await expectCreatedOnce(async () => {
          const pg = await freshPostgresUrl();
          schemas.push(pg);
          return { DATA_DIR: tempDir(), DATABASE_URL: pg.url };
        });
      } finally {
        for (const pg of schemas) await pg.drop();
      }
    },
  );
});
