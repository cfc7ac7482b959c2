import pino from "pino";
import { afterAll, describe, expect, it } from "vitest";
import { openDatabase } from "../../src/db/database.js";
import { migrate } from "../../src/db/migrations.js";
import { UsageCounter } from "../../src/features/keys/usage.js";
import { tempDir } from "../helpers/env.js";

describe("per-key usage counts", () => {
  const database = openDatabase({ dataDir: tempDir(), logger: pino({ level: "silent" }) });
  afterAll(() => database.close());

  it("counts by UTC hour over 24 h and 30 days, and prunes rows older than 31 days", async () => {
    await migrate(database.db);
    let now = new Date("2026-11-22T12:30:00Z");
    const counter = new UsageCounter(database.db, { now: () => now, flushMs: 60_000 });
    await database.db
      .insertInto("key_usage")
      .values([
        { key_id: "k1", hour: "2026-10-01T00", count: 7 }, // 52 days ago: pruned
        { key_id: "k1", hour: "2026-11-01T00", count: 5 }, // 21 days ago: in 30 d only
        { key_id: "k1", hour: "2026-11-21T13", count: 2 }, // 23.5 h ago: in 24 h
      ])
      .execute();
    counter.record("k1");
    counter.record("k1");
    counter.record("k2");
    const counts = await counter.counts(["k1", "k2", "k3"]);
    expect(counts.get("k1")).toEqual({ last24h: 4, last30d: 9, lastHour: "2026-11-22T12" });
    expect(counts.get("k2")).toMatchObject({ last24h: 1, last30d: 1 });
    expect(counts.get("k3")).toMatchObject({ last24h: 0, last30d: 0, lastHour: null });
    const left = await database.db.selectFrom("key_usage").select("hour").where("key_id", "=", "k1").execute();
    expect(left.map((r) => r.hour).sort()).toEqual(["2026-11-01T00", "2026-11-21T13", "2026-11-22T12"]);
    counter.record("k3", "refused"); // refused calls are counted apart: not in 24 h / 30 d, nor "last used"
    expect((await counter.counts(["k3"])).get("k3")).toEqual({ last24h: 0, last30d: 0, lastHour: null });
    const daily = await counter.daily(["k1", "k3"]);
    expect(daily.perDay.get("k3")?.at(-1)).toBe(0);
    expect(daily.refusedPerDay.get("k3")?.at(-1)).toBe(1);
    expect(daily.perDay.get("k1")?.at(-1)).toBe(2);
    now = new Date("2026-11-23T14:00:00Z"); // a day later: yesterday's calls are out of the 24 h window
    expect((await counter.counts(["k1"])).get("k1")).toMatchObject({ last24h: 0, last30d: 9 });
    await counter.close();
  });
});
