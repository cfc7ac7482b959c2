import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Database, openDatabase } from "../../src/db/database.js";
import { IDEMPOTENCY_TTL_MS, SqlIdempotencyStore } from "../../src/db/idempotency.js";
import { migrate } from "../../src/db/migrations.js";
import { sha256Hex } from "../../src/lib/hash.js";
import type { IdempotencyClaim } from "../../src/ports/idempotency.js";
import { DATABASE_URL, freshPostgresUrl, skipReason, tempDir } from "../helpers/env.js";

const logger = pino({ level: "silent" });
const LEASE = 30_000;
const ownerOf = (c: IdempotencyClaim | undefined): string => (c?.kind === "owned" ? c.owner : "not owned");

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
      const ref = { scope: "s", key: "key-1" };
      const h = sha256Hex('["a"]');
      const claims = await Promise.all(Array.from({ length: 10 }, () => store.claim(ref, h, LEASE)));
      const [owned, ...others] = claims.filter((c) => c.kind === "owned");
      expect(others).toEqual([]);
      expect(claims.filter((c) => c.kind === "in_progress")).toHaveLength(9);
      await store.complete(ref, ownerOf(owned), 200, '{"ok":true}');
      expect(await store.claim(ref, h, LEASE)).toEqual({ kind: "replay", status: 200, body: '{"ok":true}' });
      expect(await store.claim(ref, sha256Hex('["b"]'), LEASE)).toEqual({ kind: "mismatch" });
      expect(await store.claim({ scope: "other-scope", key: "key-1" }, h, LEASE)).toMatchObject({ kind: "owned" });
      clock += 25 * 3600 * 1000; // past 24 h: the key is free again
      const again = await store.claim(ref, sha256Hex('["b"]'), LEASE);
      expect(again).toMatchObject({ kind: "owned", takeover: false });
      await store.release(ref, ownerOf(again));
      expect(await store.claim(ref, h, LEASE)).toMatchObject({ kind: "owned", takeover: false });
    });

    it("idempotency: an answer is kept 24 hours, then the key is free again, for any body", async () => {
      let clock = Date.parse("2026-03-01T00:00:00Z");
      const store = new SqlIdempotencyStore(database.db, () => clock);
      const ref = { scope: "s", key: "kept-1" };
      const first = await store.claim(ref, "h", LEASE);
      await store.complete(ref, ownerOf(first), 200, "answer");
      clock += IDEMPOTENCY_TTL_MS - 1;
      expect(await store.claim(ref, "h", LEASE)).toEqual({ kind: "replay", status: 200, body: "answer" });
      expect(await store.claim(ref, "other", LEASE)).toEqual({ kind: "mismatch" });
      clock += 2;
      const claims = await Promise.all(Array.from({ length: 10 }, () => store.claim(ref, "other", LEASE)));
      expect(claims.filter((c) => c.kind === "owned")).toEqual([
        { kind: "owned", owner: expect.any(String), takeover: false, charged: false },
      ]);
      expect(claims.filter((c) => c.kind !== "owned")).toEqual(Array(9).fill({ kind: "in_progress" }));
    });

    it("idempotency: a lease runs out unless renewed; one request takes over; the old owner is locked out", async () => {
      let clock = Date.parse("2026-02-01T00:00:00Z");
      const store = new SqlIdempotencyStore(database.db, () => clock);
      const ref = { scope: "s", key: "lease-1" };
      const first = await store.claim(ref, "h", LEASE);
      clock += LEASE - 1;
      expect(await store.renew(ref, ownerOf(first), LEASE)).toBe(true);
      clock += LEASE - 1;
      expect(await store.claim(ref, "h", LEASE)).toEqual({ kind: "in_progress" });
      clock += 2; // the renewed lease has passed: as if its process died
      const takers = await Promise.all(Array.from({ length: 10 }, () => store.claim(ref, "h", LEASE)));
      const taken = takers.filter((c) => c.kind === "owned");
      expect(taken).toEqual([{ kind: "owned", owner: expect.any(String), takeover: true, charged: false }]);
      expect(await store.renew(ref, ownerOf(first), LEASE)).toBe(false);
      await store.complete(ref, ownerOf(first), 200, "stale");
      await store.release(ref, ownerOf(first));
      expect(await store.claim(ref, "h", LEASE)).toEqual({ kind: "in_progress" });
      // The charge is recorded on the claim by its holder only; the next takeover reads it.
      expect(await store.markCharged(ref, ownerOf(first), true)).toBe(false);
      expect(await store.markCharged(ref, ownerOf(taken[0]), true)).toBe(true);
      await store.lapse(ref, ownerOf(taken[0]));
      expect(await store.claim(ref, "h", LEASE)).toMatchObject({ kind: "owned", takeover: true, charged: true });
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
    const raw = database.raw as import("../../src/db/sqlite.js").SqliteConnection;
    expect(raw.pragma("journal_mode", { simple: true })).toBe("wal");
    expect(raw.pragma("synchronous", { simple: true })).toBe(2);
    return database.close();
  });
});
