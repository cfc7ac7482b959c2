import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ActivityLog, type CallEntry, MAX_PENDING } from "../../src/features/keys/activity-log.js";
import { type TestApp, testApp } from "../helpers/app.js";

describe("the call log while the database refuses its writes", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await testApp();
  });
  afterAll(() => t.close());

  it(`keeps the newest ${MAX_PENDING} entries, those of a failed write before the ones recorded since, and writes them once it can`, async () => {
    const db = t.deps.database.db;
    const log = new ActivityLog(db, { flushMs: 600_000 });
    // 25 accounts, so that each keeps every entry (the log trims each to its newest 1,000).
    const call = (i: number): CallEntry => ({
      ownerId: `owner-${i % 25}`,
      keyId: "key",
      at: new Date(Date.UTC(2026, 0, 1) + i).toISOString(),
      method: "POST",
      path: "/v1/vibe/classify",
      status: 200,
      errorCode: null,
      requestId: `r${i}`,
    });
    await sql`alter table call_log rename to call_log_away`.execute(db);
    try {
      for (let i = 0; i < 5; i++) log.recordCall(call(i));
      await expect(log.flush()).rejects.toThrow();
      // The 5 that failed go back in front; 19,998 more make 20,003: the 3 oldest go.
      for (let i = 5; i < MAX_PENDING + 3; i++) log.recordCall(call(i));
    } finally {
      await sql`alter table call_log_away rename to call_log`.execute(db);
    }
    await log.close();
    const rows = await db.selectFrom("call_log").select("request_id").execute();
    const ids = new Set(rows.map((r) => r.request_id));
    expect(ids.size).toBe(MAX_PENDING);
    expect(["r0", "r1", "r2"].filter((id) => ids.has(id))).toEqual([]);
    expect(["r3", "r4", "r5", `r${MAX_PENDING + 2}`].every((id) => ids.has(id))).toBe(true);
  });
});
