import { sql } from "kysely";
import pino from "pino";
import { describe, expect, it } from "vitest";
import { parseConfig } from "../../src/config.js";
import { openDatabase } from "../../src/db/database.js";
import { migrate } from "../../src/db/migrations.js";
import { migrateAuth } from "../../src/features/account/auth.js";
import { DATABASE_URL, freshPostgresUrl, tempDir } from "../helpers/env.js";

const logger = pino({ level: "silent" });

async function startInstances(env: Record<string, string>, n: number) {
  const config = parseConfig({ LOG_LEVEL: "silent", ...env });
  const dbs = Array.from({ length: n }, () =>
    openDatabase({ dataDir: config.DATA_DIR, databaseUrl: config.DATABASE_URL, logger }),
  );
  try {
    await migrate(dbs[0]?.db as never);
    // Several instances starting at once on an empty database all come up.
    await Promise.all(dbs.map((database) => migrateAuth({ config, database, logger })));
    await migrateAuth({ config, database: dbs[0] as never, logger });
    const count = await sql<{ n: number }>`select count(*) as n from auth_user`.execute(dbs[0]?.db as never);
    expect(Number(count.rows[0]?.n)).toBe(0);
  } finally {
    for (const d of dbs) await d.close();
  }
}

describe("better-auth tables", () => {
  it("are created once on SQLite even when instances start together", async () => {
    await startInstances({ DATA_DIR: tempDir() }, 3);
  });

  it.skipIf(!DATABASE_URL)("are created once on PostgreSQL even when instances start together", async () => {
    const pg = await freshPostgresUrl();
    try {
      await startInstances({ DATA_DIR: tempDir(), DATABASE_URL: pg.url }, 3);
    } finally {
      await pg.drop();
    }
  });
});
