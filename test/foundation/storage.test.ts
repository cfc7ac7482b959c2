import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Database, openDatabase } from "../../src/db/database.js";
import { hashBody, SqlIdempotencyStore } from "../../src/db/idempotency.js";
import { migrate } from "../../src/db/migrations.js";
import { DATABASE_URL, freshPostgresUrl, skipReason, tempDir } from "../helpers/env.js";

const logger = pino({ level: "silent" });

/** The same migration and query tests, on each dialect. */
function storageSuite(name: string, open: () => Promise<{ db: Database; cleanup: () => Promise<void> }>) {
  describe(name, () => {
    let database: Database;
    let cleanup: () => Promise<void>;
    beforeAll(async () => {
      ({ db: database, cleanup } = await open());
    });
    afterAll(async () => {
      await database.close();
      await cleanup();
    });

    it("applies every migration once, and again is a no-op", async () => {
      const first = await migrate(database.db);
      expect(first).toContain("001_foundation");
      expect(await migrate(database.db)).toEqual([]);
      expect(await database.ping()).toBe(true);
    });

    it("writes and reads back through Kysely", async () => {
      const now = new Date().toISOString();
      await database.db.insertInto("almanac_meta").values({ key: "k", value: "v1", updated_at: now }).execute();
      await database.db.updateTable("almanac_meta").set({ value: "v2" }).where("key", "=", "k").execute();
      const row = await database.db.selectFrom("almanac_meta").selectAll().where("key", "=", "k").executeTakeFirst();
      expect(row).toEqual({ key: "k", value: "v2", updated_at: now });
    });

    it("idempotency: claims once, replays the stored answer, refuses another body", async () => {
      let clock = Date.parse("2026-01-01T00:00:00Z");
      const store = new SqlIdempotencyStore(database.db, () => clock);
      const h = hashBody('["a"]');
      const claims = await Promise.all(Array.from({ length: 10 }, () => store.begin("s", "key-1", h)));
      expect(claims.filter((c) => c.kind === "new")).toHaveLength(1);
      expect(claims.filter((c) => c.kind === "in_progress")).toHaveLength(9);
      await store.complete("s", "key-1", 200, '{"ok":true}');
      expect(await store.begin("s", "key-1", h)).toEqual({ kind: "replay", status: 200, body: '{"ok":true}' });
      expect(await store.begin("s", "key-1", hashBody('["b"]'))).toEqual({ kind: "mismatch" });
      expect(await store.begin("other-scope", "key-1", h)).toEqual({ kind: "new" });
      clock += 25 * 3600 * 1000; // past 24 h: the key is free again
      expect(await store.begin("s", "key-1", hashBody('["b"]'))).toEqual({ kind: "new" });
      await store.abandon("s", "key-1");
      expect(await store.begin("s", "key-1", h)).toEqual({ kind: "new" });
    });
  });
}

storageSuite("storage on SQLite", async () => ({
  db: openDatabase({ dataDir: tempDir(), logger }),
  cleanup: async () => {},
}));

describe.skipIf(!DATABASE_URL)(`storage on PostgreSQL ${skipReason({ postgres: true }) ?? ""}`, () => {
  storageSuite("storage on PostgreSQL", async () => {
    const { url, drop } = await freshPostgresUrl();
    return { db: openDatabase({ dataDir: tempDir(), databaseUrl: url, logger }), cleanup: drop };
  });
});

describe("SQLite durability settings", () => {
  it("runs in WAL mode with synchronous=FULL", () => {
    const database = openDatabase({ dataDir: tempDir(), logger });
    const raw = database.raw as import("better-sqlite3").Database;
    expect(raw.pragma("journal_mode", { simple: true })).toBe("wal");
    expect(raw.pragma("synchronous", { simple: true })).toBe(2);
    return database.close();
  });
});
