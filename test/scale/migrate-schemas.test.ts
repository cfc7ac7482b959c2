import pino from "pino";
import { describe, expect, it } from "vitest";
import { openDatabase } from "../../src/db/database.js";
import { migrate } from "../../src/db/migrations.js";
import { DATABASE_URL, freshPostgresUrl, skipReason } from "../helpers/env.js";

const logger = pino({ level: "silent" });

/**
 * Instances (or tenants) may share one PostgreSQL database, each in a schema of its own chosen
 * by `search_path`. Kysely's migrator looks for its own tables in every schema unless told
 * which one: another schema's tables must not make it skip creating them here.
 */
describe.skipIf(!DATABASE_URL)(
  `migrations in one schema of a database whose other schemas are migrated ${skipReason({ postgres: true }) ?? ""}`,
  () => {
    it("a fresh schema is migrated even though another schema already has the migration tables", async () => {
      const first = await freshPostgresUrl();
      const second = await freshPostgresUrl();
      const a = openDatabase({ dataDir: "", databaseUrl: first.url, logger });
      const b = openDatabase({ dataDir: "", databaseUrl: second.url, logger });
      try {
        const appliedA = await migrate(a.db);
        expect(appliedA).toContain("001_foundation");
        expect(await migrate(b.db)).toEqual(appliedA);
        expect(await migrate(b.db)).toEqual([]);
        // Both schemas have their own tables.
        await a.db.selectFrom("api_keys").select("id").execute();
        await b.db.selectFrom("api_keys").select("id").execute();
      } finally {
        await a.close();
        await b.close();
        await first.drop();
        await second.drop();
      }
    });
  },
);
