import { describe, expect, it } from "vitest";
import { calendarMonth } from "../../src/features/keys/account-quota.js";
import { type TestApp, testApp, withTwoInstances } from "../helpers/app.js";
import { DATABASE_URL, REDIS_URL, skipReason } from "../helpers/env.js";
import { bearer, classify } from "../helpers/key-stores.js";
import { expectValue } from "../helpers/result.js";

/**
 * A free account whose month is over with 3 of its 100 uses left, then 50 parallel classify
 * calls over its two keys, spread over `apps`: the free plan's rate limit (10 a minute) serves
 * exactly 10, all from the new month. The uses are refilled once and set, not added: 100 − 10 =
 * 90 left (103 − 10 if the old month's uses stacked; fewer than 90 if two refills raced).
 */
async function turnOfTheMonth(apps: TestApp[]) {
  const first = apps[0] as TestApp;
  const ak = first.deps.keys.accounts;
  const stamp = `${Date.now()}-${Math.random().toString(36).slice(2, 8)}`;
  const owner = {
    ownerId: `user_${stamp}`,
    email: `refill-${stamp}@example.test`,
    permissions: ["vibe.classify"],
    expiresAt: null,
  };
  const keys = [
    expectValue(await ak.create({ ...owner, name: "a" })),
    expectValue(await ak.create({ ...owner, name: "b" })),
  ];
  const pool = await ak.poolOfAccount(owner.ownerId, owner.email);
  const thisMonth = calendarMonth(new Date());
  const lastMonth = calendarMonth(new Date(Date.parse(thisMonth.start) - 1));
  expect(await ak.quotas.period(pool)).toEqual({
    remaining: 100,
    periodStart: thisMonth.start,
    periodEnd: thisMonth.end,
    refillAt: thisMonth.end,
  });
  // Last month, 97 uses spent: the month is over (its end, the refill, has passed).
  await first.deps.database.db
    .updateTable("account_quotas")
    .set({ remaining: 3, period_start: lastMonth.start, period_end: lastMonth.end, refill_at: lastMonth.end })
    .where("owner_id", "=", pool)
    .execute();
  const responses = await Promise.all(
    Array.from({ length: 50 }, (_, i) =>
      classify(apps[i % apps.length] as TestApp, ["good"], bearer((keys[i % 2] as { key: string }).key)),
    ),
  );
  const count: Record<string, number> = {};
  for (const r of responses) count[r.status] = (count[r.status] ?? 0) + 1;
  expect(count).toEqual({ 200: 10, 429: 40 });
  expect(await ak.quotas.period(pool)).toEqual({
    remaining: 90,
    periodStart: thisMonth.start,
    periodEnd: thisMonth.end,
    refillAt: thisMonth.end,
  });
}

describe("free uses refill each calendar month (UTC), once, never on top of what is left", () => {
  it("SQLite: 50 parallel calls at the turn of the month", async () => {
    const t = await testApp();
    try {
      await turnOfTheMonth([t]);
    } finally {
      await t.close();
    }
  });

  it("GET /v1/usage refills a month that is over before it answers", async () => {
    const t = await testApp();
    try {
      const ak = t.deps.keys.accounts;
      const owner = { ownerId: "user_usage", email: "usage-refill@example.test", permissions: [], expiresAt: null };
      const key = expectValue(await ak.create({ ...owner, name: "a" }));
      await t.deps.database.db
        .updateTable("account_quotas")
        .set({ remaining: 0, refill_at: "2000-01-01T00:00:00.000Z" })
        .execute();
      const res = await t.app.request("/v1/usage", { headers: { Authorization: `Bearer ${key.key}` } });
      expect(await res.json()).toMatchObject({
        remaining_uses: 100,
        period: { refill_at: calendarMonth(new Date()).end },
      });
    } finally {
      await t.close();
    }
  });

  describe.skipIf(!DATABASE_URL || !REDIS_URL)(
    `PostgreSQL + Redis ${skipReason({ postgres: true, redis: true }) ?? ""}`,
    () => {
      it("two instances: 50 parallel calls at the turn of the month", async () => {
        await withTwoInstances({ REDIS_URL }, turnOfTheMonth);
      });
    },
  );
});
